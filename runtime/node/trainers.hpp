// A worker node's trainers (--trainers K): K workers, each with its own
// batches, behind one exchange per shard when K > 1 (actors/exchange.hpp).
#pragma once

#include <vector>

#include "caf/all.hpp"
#include "runtime/node/actor_configs.hpp"

namespace downpour {

// The trainers of worker node `task`, started.
std::vector<worker_actor> start_trainers(caf::actor_system& sys, const options& opts,
                                         std::size_t task, const job_model& job,
                                         const std::vector<shard_actor>& shards,
                                         const supervisor_actor& supervisor,
                                         const coordinator_actor& coordinator);

// Waits until every trainer is gone: the first reason that is not a plain
// end, or none.
caf::error wait_for_trainers(caf::actor_system& sys, const std::vector<worker_actor>& trainers);

}  // namespace downpour
