#include "runtime/files/checkpoint.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "io/input_file.hpp"
#include "runtime/files/durable_write.hpp"

// The checkpoint directory: saving through the durable write, the index,
// pruning, finding the newest valid file. runtime/files/checkpoint_format.cpp
// keeps the file format.
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

// The index is a line per kept checkpoint: 4 MiB holds tens of thousands.
// Read as a regular file only, so a FIFO in its place cannot block a restore.
constexpr std::uint64_t max_index_bytes = std::uint64_t{4} << 20;

std::vector<std::string> parse_index(const std::string& path) {
  std::istringstream in;
  try {
    in.str(read_input(path, max_index_bytes));
  } catch (const input_error& e) {
    fail(path, e.reason());
  }
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

// The save_stage values one durable write reports.
struct write_stages {
  save_stage chunk_written, synced, renamed, directory_synced;
  save_stage operator()(write_stage s) const {
    switch (s) {
      case write_stage::chunk_written:
        return chunk_written;
      case write_stage::synced:
        return synced;
      case write_stage::renamed:
        return renamed;
      case write_stage::directory_synced:
        break;
    }
    return directory_synced;
  }
};
constexpr write_stages file_stages{save_stage::file_chunk_written, save_stage::file_synced,
                                   save_stage::file_renamed, save_stage::file_directory_synced};
constexpr write_stages index_stages{save_stage::index_chunk_written, save_stage::index_synced,
                                    save_stage::index_renamed, save_stage::index_directory_synced};

void notify(const save_observer& observe, save_stage stage) {
  if (observe) observe(stage);
}

// A checkpoint, the index or a temporary of either.
bool checkpoint_file_name(const std::string& name) {
  return name == index_name || step_of(name);
}

void check_savable(const std::string& dir, const checkpoint& c) {
  auto path = (fs::path(dir) / checkpoint_name(c.global_step)).string();
  if (c.global_step < 0) fail(path, "negative global step " + std::to_string(c.global_step));
  if (c.mode != "async" && c.mode != "sync" && c.mode != "ssp")
    fail(path, "unknown mode '" + c.mode + "'");
  if (c.params.size() != c.layout.size() || c.ema.size() != c.layout.size())
    fail(path, std::to_string(c.params.size()) + " parameters and " + std::to_string(c.ema.size()) +
                   " shadows for " + c.layout.to_string() + " of " +
                   std::to_string(c.layout.size()));
}

void write_observed(const std::string& path, const std::string& bytes, const save_observer& observe,
                    const write_stages& stages) {
  try {
    write_durably(path, bytes, [&](write_stage s) { notify(observe, stages(s)); });
  } catch (const durable_write_error& e) {
    throw checkpoint_error(std::string("checkpoint: ") + e.what());
  }
}

}  // namespace

std::string save_checkpoint(const std::string& dir, const checkpoint& c, std::size_t keep,
                            const save_observer& observe) {
  check_savable(dir, c);
  std::error_code ec;
  fs::create_directories(dir, ec);
  remove_dead_temporaries(dir, checkpoint_file_name);
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
    try {
      sync_directory(dir);
    } catch (const durable_write_error& e) {
      throw checkpoint_error(std::string("checkpoint: ") + e.what());
    }
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

namespace {

[[noreturn]] void refuse_rule(const std::string& path, update_rule saved, const char* what,
                              const std::string& name, update_rule wanted) {
  throw checkpoint_error("checkpoint " + path + " holds the " + to_string(saved) + " slots of " +
                         what + " " + name + ", this job updates it by " + to_string(wanted));
}

// A dense variable's slots are in the checkpoint for the rule that wrote them.
void check_dense_rules(const checkpoint& c, const model_layout& expected, const std::string& path) {
  if (c.slots.empty()) return;  // every slot starts afresh
  const auto& saved = c.layout.variables();
  const auto& wanted = expected.variables();
  for (std::size_t i = 0; i < saved.size() && i < wanted.size(); ++i)
    if (saved[i].update.rule != wanted[i].update.rule)
      refuse_rule(path, saved[i].update.rule, "variable", saved[i].name, wanted[i].update.rule);
}

// Slots are kept only for the rule that wrote them.
void check_rules(const checkpoint& c, const model_layout& expected, const std::string& path) {
  check_dense_rules(c, expected, path);
  if (c.rows.accumulators.empty()) return;  // every row's slots start afresh
  const auto& saved = c.layout.row_variables();
  const auto& wanted = expected.row_variables();
  for (std::size_t i = 0; i < saved.size() && i < wanted.size(); ++i)
    if (saved[i].update.rule != wanted[i].update.rule)
      refuse_rule(path, saved[i].update.rule, "row variable", saved[i].name,
                  wanted[i].update.rule);
}

}  // namespace

void check_layout(const checkpoint& c, const model_layout& expected, const std::string& path) {
  if (c.layout == expected) return check_rules(c, expected, path);
  // Named alike, they differ in their variables: show those.
  const bool alike = c.layout.to_string() == expected.to_string();
  auto text = [alike](const model_layout& m) {
    return alike ? m.to_string() + " (" + m.variables_text() + ")" : m.to_string();
  };
  throw checkpoint_error("checkpoint " + path + " holds " + text(c.layout) +
                         ", this job trains " + text(expected));
}

}  // namespace downpour
