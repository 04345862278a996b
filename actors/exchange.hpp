// The exchange: one per shard in a worker process with several trainers
// (--trainers K > 1). Each trainer talks to it as to the shard; it sends the
// shard the requests of the trainers that are ready together as one push
// batch and one pull per step asked for, the pulls' keys merged so a key
// several trainers touch travels once, and hands each trainer its part.
//
//   request from trainer t                        {gather timer}
//            |                                          |
//            v                                          v
//     +-------------+  {every live trainer waits:  +-------------+
//     |  gathering  |-- queued here, or on a   --->|   flushed   |
//     +-------------+   sent pull of a later step}  +-------------+
//            ^                                          |
//            +------------------------------------------+
//                  replies answered per trainer
//
// A flush sends, in this order, the queued pushes (and push_pulls) as one
// push_batch, whose merged pull the shard answers right after them; then
// per min_step one dense pull, answering every trainer that asked for that
// step, and one merged row pull. So a trainer's pull after its own push
// still sees that push, as with the shard itself. Each push is applied as
// its own update, in arrival order: K trainers are K workers to the shard
// (docs/sparse.md, "Trainers"). The exchange ends with its shard's reason
// when the shard is gone.
#pragma once

#include "actors/exchange_config.hpp"

namespace downpour {

shard_link spawn_exchange(caf::actor_system& sys, exchange_config cfg);

}  // namespace downpour
