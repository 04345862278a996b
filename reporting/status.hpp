// What the chief knows of its job, as the stop supervisor gathers it: the
// status reply carries it as JSON (reporting/status_json.hpp); runtime/cli renders
// it as text and runtime/net as Prometheus metrics.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "data/read_position.hpp"

namespace downpour {

struct shard_facts {
  bool reachable = false;
  std::int64_t step = 0;
  std::vector<std::uint64_t> ranges;  // offset/size pairs
  std::int64_t dropped = 0;
  std::int64_t rejected = 0;
  std::int64_t replayed = 0;  // pulls answered without parameters
  std::uint64_t rows_held = 0;  // rows of a sparse variable created on the shard
  // Its rows pulled and pushed per second since a reading at least a second
  // back (reporting/count_rate.hpp).
  std::uint64_t keys_pulled_per_s = 0;
  std::uint64_t keys_pushed_per_s = 0;
};

// The newest evaluation on the validation split (--eval-every).
struct validation_facts {
  std::int64_t global_step = 0;
  double accuracy = 0.0;
  double ema_accuracy = 0.0;
};

struct status_facts {
  std::string mode;
  // What the job is doing: training, stopping, recovering, completed,
  // stopped or failed (the supervisor's phase; /metrics' downpour_job_state).
  std::string state = "training";
  std::int64_t global_step = 0;
  std::int64_t last_step = 0;
  double steps_per_s = 0.0;
  float loss = 0.0f;  // the newest loss a worker reported
  double learning_rate = 0.0;
  std::optional<validation_facts> validation;
  std::vector<std::uint32_t> live_workers;
  std::vector<std::uint32_t> dead_workers;
  std::size_t expected_workers = 0;
  std::vector<std::uint32_t> joined_workers;  // of nodes that came with --join
  std::vector<shard_facts> shards;
  // Streamed input: each worker's newest read position the shards hold.
  std::vector<worker_position> positions;
  std::string last_checkpoint;  // empty: none yet
  std::map<std::string, std::string> config_sources;  // the chief's options.sources
  double checkpoint_age_s = 0.0;
  std::int64_t bad_batches_skipped = 0;  // non-finite batches skipped (--max-bad-batches)
  // Updates applied (from step 0, the lost ones included) and lost to
  // checkpoint restores after a lost ps, and seconds training paused to
  // recover (actors/update_tally.hpp).
  std::int64_t updates_applied = 0;
  std::int64_t updates_lost = 0;
  double failover_pause_s = 0.0;
};

// The states status_facts::state takes, in the order /metrics lists them.
inline const char* const job_states[] = {"training", "stopping", "recovering",
                                         "completed", "stopped",  "failed"};

}  // namespace downpour
