// A cluster of downpour processes on loopback with reserved ports (held until
// the cluster_args is gone, so parallel tests never share one): the command
// line of each node; log_lines.hpp reads numbers from their logs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/options.hpp"
#include "log_lines.hpp"
#include "runtime/ports.hpp"
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

inline double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace downpour::testing
