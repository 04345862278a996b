#include "runtime/files/checkpoint_dir.hpp"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "runtime/files/checkpoint.hpp"

namespace downpour {
namespace {

namespace fs = std::filesystem;

void make_writable_dir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw checkpoint_error("checkpoint: cannot create the checkpoint directory " + dir + " (" +
                           ec.message() + "); choose another --checkpoint-dir");
  if (!fs::is_directory(dir, ec))
    throw checkpoint_error("checkpoint: --checkpoint-dir " + dir + " is not a directory");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw checkpoint_error("checkpoint: cannot write into the checkpoint directory " + dir + " (" +
                           std::strerror(errno) + "); choose another --checkpoint-dir");
}

// What an earlier run left that a fresh one would otherwise overwrite.
std::vector<fs::path> earlier_run(const std::string& dir) {
  std::vector<fs::path> files;
  for (const auto& path : checkpoint_files(dir)) files.emplace_back(path);
  std::error_code ec;
  for (const char* name : {"checkpoint", "metrics.csv", "summary.json"})
    if (fs::exists(fs::path(dir) / name, ec)) files.push_back(fs::path(dir) / name);
  return files;
}

std::string utc_stamp() {
  // "2026-11-30T04:14:43.044Z" without the characters file systems dislike.
  std::string stamp = utc_timestamp(std::chrono::system_clock::now());
  for (char& c : stamp)
    if (c == ':' || c == '.') c = '-';
  return stamp;
}

void move_aside(const std::string& dir, const std::vector<fs::path>& files, const logger& log) {
  const fs::path aside = fs::path(dir) / ("before-fresh-" + utc_stamp());
  std::error_code ec;
  fs::create_directory(aside, ec);
  for (const auto& f : files) {
    if (!ec) fs::rename(f, aside / f.filename(), ec);
    if (ec)
      throw checkpoint_error("checkpoint: --fresh cannot move " + f.string() + " into " +
                             aside.string() + " (" + ec.message() + ")");
  }
  log.info("checkpoint: --fresh: moved " + std::to_string(files.size()) +
           " files of the earlier run into " + aside.string() + "; training starts at step 0");
}

// Why each checkpoint cannot be read, newest first, in one line; empty if
// one can (or there is none).
std::string all_damaged(const std::vector<std::string>& oldest_first) {
  const std::string prefix = "checkpoint: ";
  std::string reasons;
  for (auto it = oldest_first.rbegin(); it != oldest_first.rend(); ++it) {
    try {
      read_checkpoint(*it);
      return "";
    } catch (const checkpoint_error& e) {
      std::string why = e.what();
      if (why.compare(0, prefix.size(), prefix) == 0) why.erase(0, prefix.size());
      reasons += (reasons.empty() ? "" : "; ") + why;
    }
  }
  return reasons;
}

}  // namespace

void prepare_checkpoint_dir(const options& opts, const logger& log) {
  const std::string& dir = opts.checkpoint_dir;
  make_writable_dir(dir);
  if (opts.fresh) {
    auto files = earlier_run(dir);
    if (!files.empty()) move_aside(dir, files, log);
    return;
  }
  const std::string damaged = all_damaged(checkpoint_files(dir));
  if (damaged.empty()) return;
  throw checkpoint_error("checkpoint: every checkpoint in " + dir + " is damaged (" + damaged +
                         "); nothing is restored or overwritten: give --fresh to start from "
                         "step 0 with them moved aside, or another --checkpoint-dir");
}

}  // namespace downpour
