// Sync vs async on the same in-process cluster (2 ps, 2 workers), side by
// side in one run: worker steps/s (a sync global step is one gradient from
// every worker, an async one is one push), and the gradients a backup worker
// costs (3 workers, 2 aggregated per step).
#include <iostream>
#include <thread>

#include "bench/bench_common.hpp"
#include "bench/bench_process.hpp"
#include "runtime/net/connect.hpp"
#include "runtime/node/job.hpp"
#include "runtime/node/node.hpp"
#include "test/support/subprocess.hpp"
#include "test/support/test_jobs.hpp"

using namespace downpour;
using namespace downpour::bench;
using downpour::testing::temp_dir;

namespace {

options job(train_mode mode, std::size_t workers, long steps, const std::string& dir) {
  options o;
  o.mode = mode;
  o.last_step = steps;
  o.quiet = true;
  o.log_threshold = log_level::warn;  // no per-run INFO lines between the rows
  o.log_every = 1000000;
  o.save_checkpoint_secs = 0;
  o.checkpoint_dir = dir;
  o.ps_hosts.assign(2, host_port{"127.0.0.1", 0});
  o.worker_hosts.assign(workers, host_port{"127.0.0.1", 0});
  if (workers == 3) o.replicas_to_aggregate = 2;
  return o;
}

struct outcome {
  double worker_steps_per_s = 0;
  double dropped = 0;
};

// Worker steps per second: gradients computed by all workers per second.
outcome run(train_mode mode, std::size_t workers, long steps) {
  temp_dir dir("bench-sync");
  auto o = job(mode, workers, steps, dir.str());
  auto r = downpour::testing::run_local_job(o);
  if (!r) throw std::runtime_error("run failed: " + describe(r.error()));
  double per_global = mode == train_mode::sync ? static_cast<double>(replicas_for(o)) : 1.0;
  double gradients = static_cast<double>(r->summary.global_step) * per_global +
                     static_cast<double>(r->dropped) / 2.0;  // each drop is counted by 2 shards
  return {gradients / r->summary.wall_s, static_cast<double>(r->dropped) / 2.0};
}

}  // namespace

int main(int argc, char** argv) {
  cli args(argc, argv, "bench-sync.json");
  const int repeats = args.repeats > 0 ? args.repeats : 3;
  const long steps = args.steps > 0 ? args.steps : 1500;
  report rep("bench_sync");
  rep.note("cores", cores_note());
  std::string load_start = loadavg();
  rep.note("CAF", caf_settings());
  rep.note("cluster", "in-process, 2 shards, " + std::to_string(steps) + " async / " +
                          std::to_string(steps / 2) + " sync global steps x " +
                          std::to_string(repeats) + " repeats");
  std::vector<double> async_rate, sync_rate, backup_rate, backup_dropped;
  for (int i = 0; i < repeats; ++i) {
    async_rate.push_back(run(train_mode::async, 2, steps).worker_steps_per_s);
    sync_rate.push_back(run(train_mode::sync, 2, steps / 2).worker_steps_per_s);
    auto b = run(train_mode::sync, 3, steps / 2);
    backup_rate.push_back(b.worker_steps_per_s);
    backup_dropped.push_back(b.dropped / static_cast<double>(steps / 2));
  }
  rep.note("loadavg", "start " + load_start + ", end " + loadavg());
  rep.value("async, 2 workers: worker steps/s", async_rate, "steps/s");
  rep.value("sync, 2 workers: worker steps/s", sync_rate, "steps/s");
  rep.value("sync, 3 workers (2 aggregated): steps/s", backup_rate, "steps/s");
  rep.value("backup: dropped gradients per global step", backup_dropped, "gradients");
  rep.ratio("sync / async worker steps/s", ratios(sync_rate, async_rate), 0.8, false);
  rep.print(std::cout);
  rep.write_json(args.json);
  return 0;
}
