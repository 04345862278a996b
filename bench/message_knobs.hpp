// The CAF 0.17 settings bench_message --knobs compares (docs/performance.md,
// "CAF 0.17's knobs"). Each starts from what a node runs (tune_caf with the
// default options, runtime/node/caf_tuning.hpp) and changes one thing, so a
// ratio against "node" is the effect of that one setting.
#pragma once

#include <caf/all.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runtime/node/caf_tuning.hpp"

namespace downpour::bench {

using configure_fn = std::function<void(caf::actor_system_config&)>;

struct knob {
  std::string name;  // on the command line (--knob) and in the table
  std::string what;
  configure_fn configure;
};

// A ps node's settings with the options changed, then CAF's keys set.
inline configure_fn node_with(const std::function<void(options&)>& change,
                              const configure_fn& then = {}) {
  return [change, then](caf::actor_system_config& cfg) {
    options o;
    o.role = role_kind::ps;
    change(o);
    tune_caf(cfg, o);
    if (then) then(cfg);
  };
}

inline configure_fn node_and(const configure_fn& then) {
  return node_with([](options&) {}, then);
}

inline configure_fn set_size(const std::string& key, std::size_t value) {
  return [key, value](caf::actor_system_config& cfg) { cfg.set(key, value); };
}

inline std::vector<knob> knobs() {
  return {
      {"node", "a node's settings: sharing, 2 threads, middleman workers 0, heartbeat 0.5 s",
       node_and({})},
      // The same again: how far two runs of one setting differ on this machine.
      {"node-again", "a node's settings again (the control: its ratio is the noise)",
       node_and({})},
      {"heartbeat-off", "no heartbeat, no connection timeout",
       node_with([](options& o) { o.heartbeat_interval_s = 0; })},
      {"heartbeat-0.1s", "heartbeat 0.1 s, connection timeout 0.5 s",
       node_with([](options& o) {
         o.heartbeat_interval_s = 0.1;
         o.node_timeout_s = 0.5;
       })},
      {"reads-1", "middleman.max-consecutive-reads 1 (CAF: 50)",
       node_and(set_size("middleman.max-consecutive-reads", 1))},
      {"reads-1M", "middleman.max-consecutive-reads 1000000 (as with TLS)",
       node_and(set_size("middleman.max-consecutive-reads", 1'000'000))},
      {"throughput-1", "scheduler.max-throughput 1 (CAF: unbounded)",
       node_and(set_size("scheduler.max-throughput", 1))},
      {"throughput-10", "scheduler.max-throughput 10",
       node_and(set_size("scheduler.max-throughput", 10))},
      {"stealing", "scheduler.policy stealing, 2 threads",
       node_with([](options& o) { o.scheduler_policy = "stealing"; })},
      {"threads-1", "scheduler.max-threads 1",
       node_with([](options& o) { o.scheduler_threads = 1; })},
      {"caf-defaults", "CAF 0.17.6's own: stealing, 4 threads, 1 BASP worker, no heartbeat",
       [](caf::actor_system_config& cfg) { cfg.set("logger.console", caf::atom("none")); }},
  };
}

inline std::optional<knob> knob_named(const std::string& name) {
  for (auto& k : knobs())
    if (k.name == name) return k;
  return std::nullopt;
}

}  // namespace downpour::bench
