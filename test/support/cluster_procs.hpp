// A cluster of downpour processes on loopback with reserved ports (held until
// the cluster_args is gone, so parallel tests never share one): the command
// line of each node; log_lines.hpp reads numbers from their logs.
#pragma once

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "config/durations.hpp"
#include "config/options.hpp"
#include "log_lines.hpp"
#include "runtime/net/ports.hpp"
#include "subprocess.hpp"

namespace downpour::testing {

struct cluster_args {
  port_reservation ports;
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

// Checkpoints in dir; loopback: "127.0.0.1" or "::1" (written [::1]:PORT in the host lists).
inline cluster_args make_cluster(std::size_t ps, std::size_t workers, const std::string& dir,
                                 std::vector<std::string> common,
                                 const std::string& loopback = "127.0.0.1") {
  cluster_args c{port_reservation(ps + workers, loopback), "", "", dir, std::move(common)};
  for (std::size_t i = 0; i < ps + workers; ++i) {
    auto& list = i < ps ? c.ps : c.workers;
    list += (list.empty() ? "" : ",") + to_string(host_port{loopback, c.ports[i]});
  }
  return c;
}

inline cluster_args make_cluster(std::size_t ps, std::size_t workers, const temp_dir& dir,
                                 std::vector<std::string> common,
                                 const std::string& loopback = "127.0.0.1") {
  return make_cluster(ps, workers, dir.str(), std::move(common), loopback);
}

// The usual test cluster: 2 ps and 2 workers of c with extra options, each
// logging to DIR/NAME.log (NAME: ps0, ps1, w0, w1, then run, which tells the
// logs of a cluster started again apart).
struct two_by_two {
  two_by_two(const cluster_args& c, const temp_dir& dir, const std::vector<std::string>& extra = {},
             const std::string& run = "")
      : ps0(c.node("ps", 0, extra), dir / ("ps0" + run + ".log")),
        ps1(c.node("ps", 1, extra), dir / ("ps1" + run + ".log")),
        chief(c.node("worker", 0, extra), dir / ("w0" + run + ".log")),
        w1(c.node("worker", 1, extra), dir / ("w1" + run + ".log")) {}
  process ps0, ps1, chief, w1;
  std::vector<process*> all() { return {&chief, &w1, &ps0, &ps1}; }
};

// The port of the first entry of a host list ("127.0.0.1:P,127.0.0.1:Q" -> P).
inline std::uint16_t first_port(const std::string& hosts) {
  const auto first = hosts.substr(0, hosts.find(','));
  return static_cast<std::uint16_t>(std::stoi(first.substr(first.rfind(':') + 1)));
}

// How many ERROR lines a node's output holds: a failure is one line, never
// repeated by the actor that met it and by its node.
inline std::size_t error_lines(const std::string& text) {
  std::size_t n = 0;
  for (auto at = text.find(" ERROR "); at != std::string::npos; at = text.find(" ERROR ", at + 1))
    ++n;
  return n;
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

}  // namespace downpour::testing
