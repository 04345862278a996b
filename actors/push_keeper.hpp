// A worker node's keeper of its trainers' unanswered pushes (--ps-replicas
// 2, docs/failure-model.md): a trainer ends with the ps it lost, and what it
// had pushed without an answer would end with it. The node's next trainers
// send the kept pushes again once the shards are placed (start_trainers),
// where a shard takes its part if a failover made it owe one.
#pragma once

#include "protocol/messages.hpp"

namespace downpour {

push_keeper_actor spawn_push_keeper(caf::actor_system& sys);

}  // namespace downpour
