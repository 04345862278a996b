// A worker node's trainers (--trainers K): K workers, each with its own
// batches, behind one exchange per shard when K > 1 (actors/exchange.hpp).
#pragma once

#include <vector>

#include "caf/all.hpp"
#include "runtime/node/actor_configs.hpp"

namespace downpour {

// The trainers of worker node `task`, started; with a keeper (a worker
// node with --ps-replicas 2, async or ssp), the pushes it kept of the
// trainers before them are sent again first.
std::vector<worker_actor> start_trainers(caf::actor_system& sys, const options& opts,
                                         std::size_t task, const job_model& job,
                                         const std::vector<shard_actor>& shards,
                                         const supervisor_actor& supervisor,
                                         const coordinator_actor& coordinator,
                                         const push_keeper_actor& keeper);

// The keeper of a worker node's unanswered pushes, if its trainers need
// one (--ps-replicas 2, async or ssp), ended with the node.
struct node_keeper {
  node_keeper(caf::actor_system& sys, const options& opts);
  ~node_keeper();
  node_keeper(const node_keeper&) = delete;
  node_keeper& operator=(const node_keeper&) = delete;
  push_keeper_actor handle;
};

// Waits until every trainer is gone: the first reason that is not a plain
// end, or none.
caf::error wait_for_trainers(caf::actor_system& sys, const std::vector<worker_actor>& trainers);

}  // namespace downpour
