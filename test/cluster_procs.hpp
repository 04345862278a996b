// A cluster of downpour processes on 127.0.0.1 with ephemeral ports: the
// command line of each node, and helpers to read numbers from their logs.
#pragma once

#include <cstdint>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/connect.hpp"
#include "subprocess.hpp"

namespace downpour::testing {

struct cluster_args {
  std::string ps, workers, dir;
  std::vector<std::string> common;
  std::vector<std::string> node(const std::string& role, int task,
                                std::vector<std::string> extra = {}) const {
    std::vector<std::string> a = {DOWNPOUR_BINARY, "--role=" + role, "--task=" + std::to_string(task),
                                  "--ps-hosts=" + ps, "--worker-hosts=" + workers,
                                  "--checkpoint-dir=" + dir, "--quiet"};
    a.insert(a.end(), common.begin(), common.end());
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
};

inline cluster_args make_cluster(std::size_t ps, std::size_t workers, const temp_dir& dir,
                                 std::vector<std::string> common) {
  auto ports = pick_free_ports(ps + workers);
  cluster_args c;
  for (std::size_t i = 0; i < ps + workers; ++i) {
    auto& list = i < ps ? c.ps : c.workers;
    list += (list.empty() ? "" : ",") + std::string("127.0.0.1:") + std::to_string(ports[i]);
  }
  c.dir = dir.str();
  c.common = std::move(common);
  return c;
}

// The usual test cluster: 2 ps and 2 workers of c, each logging to DIR/NAME.log.
struct two_by_two {
  two_by_two(const cluster_args& c, const temp_dir& dir)
      : ps0(c.node("ps", 0), dir / "ps0.log"),
        ps1(c.node("ps", 1), dir / "ps1.log"),
        chief(c.node("worker", 0), dir / "w0.log"),
        w1(c.node("worker", 1), dir / "w1.log") {}
  process ps0, ps1, chief, w1;
  std::vector<process*> all() { return {&chief, &w1, &ps0, &ps1}; }
};

// A whole (small) file as text, "" if it cannot be read.
inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// The step of the newest "checkpoint: saved DIR/model.ckpt-N" line in text, -1 if none.
inline std::int64_t newest_saved_step(const std::string& text) {
  static const std::regex saved("checkpoint: saved \\S*model\\.ckpt-(\\d+)");
  std::int64_t newest = -1;
  for (std::sregex_iterator it(text.begin(), text.end(), saved), end; it != end; ++it)
    newest = std::max<std::int64_t>(newest, std::stoll((*it)[1]));
  return newest;
}

// S of the first "checkpoint: restored PATH at global step S" line, -1 if none.
inline std::int64_t restored_step(const std::string& text) {
  static const std::regex restored("checkpoint: restored \\S+ at global step (\\d+)");
  std::smatch m;
  return std::regex_search(text, m, restored) ? std::stoll(m[1]) : -1;
}

// S of the chief's "stopped by SIG on NODE at global step S; checkpoint PATH"
// line, -1 if none.
inline std::int64_t stopped_step(const std::string& text) {
  static const std::regex stopped("stopped by \\S+ on \\S+ at global step (\\d+); checkpoint ");
  std::smatch m;
  return std::regex_search(text, m, stopped) ? std::stoll(m[1]) : -1;
}

// The value of "key": in a summary.json's text ("" if absent): a string's
// contents, or a number as written.
inline std::string summary_field(const std::string& json, const std::string& key) {
  static const std::regex field("\"(\\w+)\": (\"([^\"]*)\"|[-0-9.eE+]+)");
  for (std::sregex_iterator it(json.begin(), json.end(), field), end; it != end; ++it)
    if ((*it)[1] == key) return (*it)[3].matched ? (*it)[3].str() : (*it)[2].str();
  return "";
}

inline double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace downpour::testing
