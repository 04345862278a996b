// Shared by the bench programs that run downpour as child processes: finding
// the binary, reading a run's summary.json, a cluster of real processes on
// loopback, and the CAF settings a node uses (named in every report).
#pragma once

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench_common.hpp"
#include "model/mlp_spec.hpp"
#include "runtime/net/connect.hpp"
#include "runtime/net/ports.hpp"
#include "runtime/node/node.hpp"
#include "test/support/subprocess.hpp"

namespace downpour::bench {

// --binary=PATH, else $DOWNPOUR_BINARY, else `downpour` next to this program.
inline std::string find_binary(const std::vector<std::string>& rest) {
  for (auto& a : rest)
    if (a.rfind("--binary=", 0) == 0) return a.substr(9);
  if (const char* env = std::getenv("DOWNPOUR_BINARY")) return env;
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  auto next_to = self.parent_path() / "downpour";
  if (!ec && std::filesystem::exists(next_to)) return next_to.string();
  return "";
}

// The scheduler and network settings a node runs with by default.
inline std::string caf_settings() {
  const model_layout seed = mlp_spec{}.layout("mlp");
  node_config cfg{options{}, seed};
  auto show = [&](const char* key) {
    auto v = caf::get_if(&cfg.content, key);
    return std::string(key) + "=" + (v ? caf::to_string(*v) : std::string("?"));
  };
  auto threads_for = [&seed](role_kind role) {
    options o;
    o.role = role;
    node_config c{o, seed};
    auto v = caf::get_if(&c.content, "scheduler.max-threads");
    return v ? caf::to_string(*v) : std::string("?");
  };
  return show("scheduler.policy") + ", scheduler.max-threads=" + threads_for(role_kind::ps) +
         " (ps, worker node), " + threads_for(role_kind::local) + " (local 2 workers), " +
         show("middleman.workers");
}

inline double json_number(const std::string& text, const std::string& key) {
  auto at = text.find("\"" + key + "\":");
  if (at == std::string::npos) throw std::runtime_error("summary.json lacks " + key);
  return std::strtod(text.c_str() + at + key.size() + 3, nullptr);
}

// wall_s and global_step of the summary.json a run wrote into dir.
struct run_summary_numbers {
  double wall_s = 0, steps = 0;
};

inline run_summary_numbers read_summary(const testing::temp_dir& dir) {
  std::ifstream in(dir / "summary.json");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  return {json_number(text, "wall_s"), json_number(text, "global_step")};
}

inline std::string host_list(const port_reservation& ports, std::size_t from,
                             std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i)
    out += (i ? "," : "") + std::string("127.0.0.1:") + std::to_string(ports[from + i]);
  return out;
}

// One finished child process: its exit, its peak resident set (from wait4;
// note that Linux counts the forking parent's resident set at fork time in
// it, so a bench that forks must stay smaller than what it measures).
struct child_run {
  double wall_s = 0;  // start to exit, as seen by the parent
  double cpu_s = 0;   // user + system, the whole process
  double peak_rss_mb = 0;
};

inline void wait_ok(testing::process& p, const std::string& what) {
  if (int rc = p.wait(std::chrono::seconds(900)); rc != 0)
    throw std::runtime_error(what + " exited with " + std::to_string(rc) + ": " + p.output());
}

// downpour with args and --checkpoint-dir=dir, waited for.
inline child_run run_child(const std::string& bin, std::vector<std::string> args,
                           const testing::temp_dir& dir, const std::string& tag) {
  args.insert(args.begin(), bin);
  args.push_back("--checkpoint-dir=" + dir.str());
  double t0 = now_s();
  testing::process p(args, dir / (tag + ".log"));
  wait_ok(p, tag);
  return {now_s() - t0, p.cpu_s(), static_cast<double>(p.peak_rss_kb()) / 1024.0};
}

// A cluster of real processes on loopback: every ps, then the workers with the
// chief last; the chief's summary.json lands in dir.
struct cluster_run {
  double wall_s = 0;  // first start to last exit
  double cpu_s = 0;   // user + system, summed over the processes
  std::vector<double> ps_rss_mb, worker_rss_mb;  // by task index
};

inline cluster_run run_cluster(const std::string& bin, std::size_t n_ps, std::size_t n_workers,
                               const std::vector<std::string>& extra,
                               const testing::temp_dir& dir) {
  const port_reservation ports(n_ps + n_workers);
  std::string ps = host_list(ports, 0, n_ps), workers = host_list(ports, n_ps, n_workers);
  std::vector<std::unique_ptr<testing::process>> nodes;
  auto start = [&](const std::string& role, std::size_t task) {
    std::vector<std::string> args{bin, "--role=" + role, "--task=" + std::to_string(task),
                                  "--ps-hosts=" + ps, "--worker-hosts=" + workers,
                                  "--checkpoint-dir=" + dir.str(), "--connect-timeout=60"};
    args.insert(args.end(), extra.begin(), extra.end());
    nodes.push_back(std::make_unique<testing::process>(args, dir / (role + std::to_string(task) + ".log")));
  };
  double t0 = now_s();
  for (std::size_t k = 0; k < n_ps; ++k) start("ps", k);
  for (std::size_t w = n_workers; w-- > 0;) start("worker", w);
  for (auto& p : nodes) wait_ok(*p, "a node");
  cluster_run out;
  out.wall_s = now_s() - t0;
  for (auto& p : nodes) out.cpu_s += p->cpu_s();
  for (std::size_t k = 0; k < n_ps; ++k)
    out.ps_rss_mb.push_back(static_cast<double>(nodes[k]->peak_rss_kb()) / 1024.0);
  out.worker_rss_mb.resize(n_workers);
  for (std::size_t i = 0; i < n_workers; ++i)  // started in reverse task order
    out.worker_rss_mb[n_workers - 1 - i] =
        static_cast<double>(nodes[n_ps + i]->peak_rss_kb()) / 1024.0;
  return out;
}

}  // namespace downpour::bench
