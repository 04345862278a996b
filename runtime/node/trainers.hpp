// A worker node's trainers (--trainers K): K workers, each with its own
// batches, behind one exchange per shard when K > 1 (actors/exchange.hpp).
#pragma once

#include <memory>
#include <vector>

#include "caf/all.hpp"
#include "runtime/node/actor_configs.hpp"

namespace downpour {

// What a worker node keeps of its trainers across their restarts after a
// lost ps (--ps-replicas 2 across processes; empty otherwise): the keeper of
// their unanswered pushes, and each trainer's batches in memory, so its next
// trainer draws on where it left off and no batch is trained twice.
struct trainer_keep {
  push_keeper_actor pushes;
  std::vector<std::shared_ptr<seat_batches>> batches;  // per trainer; none: each starts afresh
};

// The trainers of worker node `task`, started; with a keeper, the pushes
// it kept of the trainers before them are sent again first.
std::vector<worker_actor> start_trainers(caf::actor_system& sys, const options& opts,
                                         std::size_t task, const job_model& job,
                                         const std::vector<shard_actor>& shards,
                                         const supervisor_actor& supervisor,
                                         const coordinator_actor& coordinator,
                                         const trainer_keep& keep);

// A worker node's trainer_keep, if its trainers need one; its keeper ends
// with the node.
struct node_keeper {
  node_keeper(caf::actor_system& sys, const options& opts, const job_model& job);
  ~node_keeper();
  node_keeper(const node_keeper&) = delete;
  node_keeper& operator=(const node_keeper&) = delete;
  trainer_keep keep;
};

// Waits until every trainer is gone: the first reason that is not a plain
// end, or none.
caf::error wait_for_trainers(caf::actor_system& sys, const std::vector<worker_actor>& trainers);

}  // namespace downpour
