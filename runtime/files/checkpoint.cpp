#include "runtime/files/checkpoint.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <utility>

// The checkpoint directory: durable writes, the index, pruning, finding the
// newest valid file. runtime/files/checkpoint_format.cpp keeps the file format.
namespace downpour {
namespace {

namespace fs = std::filesystem;

constexpr char index_name[] = "checkpoint";
constexpr char name_prefix[] = "model.ckpt-";

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw checkpoint_error("checkpoint: " + path + ": " + what);
}

// The step of a file named model.ckpt-STEP; nullopt for any other name.
std::optional<std::int64_t> step_of(const std::string& name) {
  constexpr std::size_t n = sizeof(name_prefix) - 1;
  if (name.size() <= n || name.size() > n + 18 || name.compare(0, n, name_prefix) != 0)
    return std::nullopt;
  if (!std::all_of(name.begin() + n, name.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
    return std::nullopt;
  return std::stoll(name.substr(n));
}

// TensorFlow's index: model_checkpoint_path first, then the kept ones oldest first.
std::string index_text(const std::vector<std::string>& kept) {
  std::string text = "model_checkpoint_path: \"" + kept.back() + "\"\n";
  for (const auto& name : kept) text += "all_model_checkpoint_paths: \"" + name + "\"\n";
  return text;
}

std::vector<std::string> parse_index(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail(path, std::string("cannot open: ") + std::strerror(errno));
  std::string line, newest;
  std::vector<std::string> names;
  for (int number = 1; std::getline(in, line); ++number) {
    auto colon = line.find(": \"");
    std::string key = line.substr(0, colon);
    std::string value = colon == std::string::npos ? "" : line.substr(colon + 3);
    if (value.empty() || value.back() != '"' || !step_of(value.erase(value.size() - 1)))
      fail(path, "malformed line " + std::to_string(number));
    if (key == "model_checkpoint_path" && newest.empty())
      newest = value;
    else if (key == "all_model_checkpoint_paths")
      names.push_back(value);
    else
      fail(path, "malformed line " + std::to_string(number));
  }
  if (newest.empty()) fail(path, "no model_checkpoint_path");
  if (names.empty()) names.push_back(newest);
  if (names.back() != newest) fail(path, "model_checkpoint_path is not the last one listed");
  return names;
}

struct history {
  std::vector<std::string> names;  // oldest first
  std::string index_problem;       // why the index was not used; empty if it was
};

// Files missing from the index were either saved after it (a crash before the
// index was replaced: newest) or left from a run that pruned them (oldest).
history read_history(const std::string& dir) {
  history h;
  std::vector<std::pair<std::int64_t, std::string>> scanned;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    auto name = entry.path().filename().string();
    if (auto step = step_of(name)) scanned.emplace_back(*step, name);
  }
  std::sort(scanned.begin(), scanned.end());
  std::vector<std::string> indexed;
  std::string index_path = (fs::path(dir) / index_name).string();
  if (fs::exists(index_path, ec)) {
    try {
      indexed = parse_index(index_path);
    } catch (const checkpoint_error& e) {
      h.index_problem = e.what();
    }
  }
  std::int64_t newest = indexed.empty() ? -1 : *step_of(indexed.back());
  std::vector<std::string> later;
  for (const auto& [step, name] : scanned) {
    if (std::find(indexed.begin(), indexed.end(), name) != indexed.end()) continue;
    (step < newest ? h.names : later).push_back(name);
  }
  h.names.insert(h.names.end(), indexed.begin(), indexed.end());
  h.names.insert(h.names.end(), later.begin(), later.end());
  return h;
}

class unique_fd {
 public:
  explicit unique_fd(int fd) : fd_(fd) {}
  unique_fd(const unique_fd&) = delete;
  unique_fd& operator=(const unique_fd&) = delete;
  ~unique_fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

void sync_directory(const fs::path& dir, const std::string& path) {
  unique_fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0 || ::fsync(fd.get()) != 0)
    fail(path, std::string("cannot sync its directory: ") + std::strerror(errno));
}

// The save_stage values one durable write reports.
struct write_stages {
  save_stage chunk_written, synced, renamed, directory_synced;
};
constexpr write_stages file_stages{save_stage::file_chunk_written, save_stage::file_synced,
                                   save_stage::file_renamed, save_stage::file_directory_synced};
constexpr write_stages index_stages{save_stage::index_chunk_written, save_stage::index_synced,
                                    save_stage::index_renamed, save_stage::index_directory_synced};

void notify(const save_observer& observe, save_stage stage) {
  if (observe) observe(stage);
}

void write_all(int fd, const char* data, std::size_t size, const std::string& path) {
  for (std::size_t done = 0; done < size;) {
    ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(path, std::string("cannot write: ") + std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
}

void write_and_sync(const fs::path& tmp, const std::string& bytes, const std::string& path,
                    const save_observer& observe, const write_stages& stages) {
  unique_fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (fd.get() < 0) fail(path, "cannot create " + tmp.string() + ": " + std::strerror(errno));
  for (std::size_t done = 0; done < bytes.size(); done += save_chunk_bytes) {
    write_all(fd.get(), bytes.data() + done, std::min(save_chunk_bytes, bytes.size() - done), path);
    notify(observe, stages.chunk_written);
  }
  if (::fsync(fd.get()) != 0 || ::close(fd.release()) != 0)
    fail(path, std::string("cannot sync: ") + std::strerror(errno));
  notify(observe, stages.synced);
}

// ".NAME.tmp.PID.RANDOM": hidden, never a checkpoint name, and its PID tells
// whether the writer can still be alive.
std::string temp_name(const std::string& name) {
  char suffix[48];
  std::snprintf(suffix, sizeof suffix, ".tmp.%ld.%08x", static_cast<long>(::getpid()),
                static_cast<unsigned>(std::random_device{}()));
  return "." + name + suffix;
}

// Temporaries left by a writer killed mid-save; a live writer's are kept.
void remove_dead_temporaries(const std::string& dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    auto name = entry.path().filename().string();
    auto tmp = name.find(".tmp.");
    if (name[0] != '.' || tmp == std::string::npos) continue;
    auto base = name.substr(1, tmp - 1);
    if (base != index_name && !step_of(base)) continue;
    long pid = std::strtol(name.c_str() + tmp + 5, nullptr, 10);
    if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
      fs::remove(entry.path(), ec);
  }
}

void check_savable(const std::string& dir, const checkpoint& c) {
  auto path = (fs::path(dir) / checkpoint_name(c.global_step)).string();
  if (c.global_step < 0) fail(path, "negative global step " + std::to_string(c.global_step));
  if (c.mode != "async" && c.mode != "sync" && c.mode != "ssp")
    fail(path, "unknown mode '" + c.mode + "'");
  if (c.params.size() != c.shape.size() || c.ema.size() != c.shape.size())
    fail(path, std::to_string(c.params.size()) + " parameters and " + std::to_string(c.ema.size()) +
                   " shadows for a " + c.shape.to_string() + " model of " +
                   std::to_string(c.shape.size()));
}

void write_observed(const std::string& path, const std::string& bytes, const save_observer& observe,
                    const write_stages& stages) {
  fs::path target(path);
  fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(dir, ec);
  fs::path tmp = dir / temp_name(target.filename().string());
  try {
    write_and_sync(tmp, bytes, path, observe, stages);
    if (::rename(tmp.c_str(), target.c_str()) != 0)
      fail(path, std::string("cannot rename the temporary: ") + std::strerror(errno));
  } catch (...) {
    fs::remove(tmp, ec);
    throw;
  }
  notify(observe, stages.renamed);
  sync_directory(dir, path);
  notify(observe, stages.directory_synced);
}

}  // namespace

void write_file_durably(const std::string& path, const std::string& bytes) {
  write_observed(path, bytes, {}, file_stages);
}

std::string save_checkpoint(const std::string& dir, const checkpoint& c, std::size_t keep,
                            const save_observer& observe) {
  check_savable(dir, c);
  std::error_code ec;
  fs::create_directories(dir, ec);
  remove_dead_temporaries(dir);
  const std::string name = checkpoint_name(c.global_step);
  const std::string path = (fs::path(dir) / name).string();
  write_observed(path, encode_checkpoint(c), observe, file_stages);
  auto names = read_history(dir).names;
  names.erase(std::remove(names.begin(), names.end(), name), names.end());
  names.push_back(name);
  std::size_t drop = keep == 0 || names.size() <= keep ? 0 : names.size() - keep;
  write_observed((fs::path(dir) / index_name).string(),
                 index_text({names.begin() + static_cast<std::ptrdiff_t>(drop), names.end()}),
                 observe, index_stages);
  for (std::size_t i = 0; i < drop; ++i) {
    fs::remove(fs::path(dir) / names[i], ec);
    notify(observe, save_stage::pruned);
  }
  if (drop > 0) {
    sync_directory(dir, path);
    notify(observe, save_stage::pruning_synced);
  }
  return path;
}

std::optional<found_checkpoint> find_newest_checkpoint(const std::string& dir,
                                                       std::ostream& warnings) {
  history h = read_history(dir);
  if (!h.index_problem.empty())
    warnings << h.index_problem << "; scanning the model.ckpt-* files\n";
  std::vector<std::string> skipped;
  for (auto it = h.names.rbegin(); it != h.names.rend(); ++it) {
    std::string path = (fs::path(dir) / *it).string();
    try {
      found_checkpoint found{path, read_checkpoint(path)};
      for (const auto& why : skipped) warnings << why << "; using " << *it << "\n";
      return found;
    } catch (const checkpoint_error& e) {
      skipped.push_back(e.what());
    }
  }
  for (const auto& why : skipped) warnings << why << "; no valid checkpoint left\n";
  return std::nullopt;
}

std::vector<std::string> checkpoint_files(const std::string& dir) {
  std::vector<std::string> paths;
  for (const auto& name : read_history(dir).names) paths.push_back((fs::path(dir) / name).string());
  return paths;
}

std::optional<checkpoint> load_newest_checkpoint(const std::string& dir, std::ostream& warnings) {
  auto found = find_newest_checkpoint(dir, warnings);
  if (!found) return std::nullopt;
  return std::move(found->data);
}

void check_shape(const checkpoint& c, const model_shape& expected, const std::string& path) {
  if (c.shape != expected)
    throw checkpoint_error("checkpoint: " + path + " holds a " + c.shape.to_string() +
                           " model but this job is " + expected.to_string());
}

}  // namespace downpour
