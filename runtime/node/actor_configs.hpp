// The configurations of a node's actors, from the options and the job.
#pragma once

#include <cstddef>
#include <vector>

#include "actors/parameter_shard.hpp"
#include "actors/worker.hpp"
#include "config/options.hpp"
#include "runtime/node/job.hpp"

namespace downpour {

// Shard index of the job's layout.
shard_config shard_config_for(const options& opts, const model_layout& layout, std::size_t index);

// Worker index, training on shards, joined to the chief's supervisor and coordinator.
worker_config worker_config_for(const options& opts, std::size_t index, const job_model& job,
                                std::vector<shard_actor> shards, supervisor_actor supervisor,
                                coordinator_actor coordinator);

}  // namespace downpour
