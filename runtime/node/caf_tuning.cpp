#include "runtime/node/caf_tuning.hpp"

#include <algorithm>
#include <thread>

#include "caf/atom.hpp"
#include "config/durations.hpp"
#include "runtime/node/job.hpp"

namespace downpour {

// Workers run on the scheduler (actors/worker.hpp): one thread more than the
// node's workers, so the model math never holds every thread and the other
// actors always have one to run on.
std::size_t default_scheduler_threads(const options& opts, std::size_t hardware) {
  std::size_t workers = 0;
  if (opts.role == role_kind::worker) workers = opts.trainers;
  if (opts.role == role_kind::local) workers = trainer_count(opts);
  const std::size_t by_cores = std::max<std::size_t>(2, std::min<std::size_t>(4, hardware));
  return std::max(by_cores, workers + 1);
}

// Sharing and no deserialization workers: on 2 cores, work-stealing's
// polling threads and a BASP worker thread take the CPU the peer process
// needs (docs/performance.md). Heartbeats detect hung peers.
void tune_caf(caf::actor_system_config& cfg, const options& opts) {
  std::size_t threads = opts.scheduler_threads;
  if (threads == 0) threads = default_scheduler_threads(opts, std::thread::hardware_concurrency());
  cfg.set("scheduler.policy",
          opts.scheduler_policy == "stealing" ? caf::atom("stealing") : caf::atom("sharing"));
  cfg.set("scheduler.max-threads", threads);
  cfg.set("middleman.workers", std::size_t{0});
  cfg.set("logger.console", caf::atom("none"));
  if (opts.heartbeat_interval_s > 0) {
    cfg.set("middleman.heartbeat-interval", timespan_of(opts.heartbeat_interval_s));
    cfg.set("middleman.connection-timeout", timespan_of(opts.node_timeout_s));
  }
}

}  // namespace downpour
