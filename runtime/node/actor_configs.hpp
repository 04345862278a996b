// The configurations of a node's actors, from the options and the job, each
// filled field by field.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "actors/checkpoint_saver.hpp"
#include "actors/evaluator.hpp"
#include "actors/parameter_shard.hpp"
#include "actors/supervisor_config.hpp"
#include "actors/sync_coordinator.hpp"
#include "actors/worker.hpp"
#include "config/options.hpp"
#include "runtime/node/job.hpp"
#include "runtime/node/restore.hpp"

namespace downpour {

// Shard index of the job's layout.
shard_config shard_config_for(const options& opts, const model_layout& layout, std::size_t index);

// Trainer t of worker node `task`: worker task * --trainers + t.
struct trainer_seat {
  std::size_t task = 0;
  std::size_t trainer = 0;
};

// A trainer, training on shards (or their exchanges), joined to the chief's
// supervisor and coordinator.
worker_config worker_config_for(const options& opts, trainer_seat seat, const job_model& job,
                                std::vector<shard_link> shards, supervisor_actor supervisor,
                                coordinator_actor coordinator);

// The chief's helpers, on the shards of the current recovery epoch.
coordinator_config coordinator_config_for(const options& opts, std::vector<shard_actor> shards);
saver_config saver_config_for(const options& opts, const model_layout& layout,
                              std::vector<shard_actor> shards, std::int64_t start_step);
evaluator_config evaluator_config_for(const options& opts, const job_model& job,
                                      std::vector<shard_actor> shards, supervisor_actor supervisor);

// The chief's stop supervisor, from the step the shards start at; it answers
// status requests with status JSON.
supervisor_config supervisor_config_for(const options& opts, const model_layout& layout,
                                        const start_state& start, std::int64_t start_step,
                                        std::vector<shard_actor> shards,
                                        coordinator_actor coordinator, saver_actor saver);

}  // namespace downpour
