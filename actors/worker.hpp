// A worker: pull all shards (in parallel) -> compute the gradient of its own
// batch -> push to all shards, until the job is over. Runs on the scheduler,
// not detached: the shard then applies a pushed gradient on the thread (and
// core) whose cache holds it, and a node has no more threads than cores.
// Measured on 2 cores, 2 workers + 2 shards in one process: 1.00 ms/global
// step with 2 scheduler threads, 1.04 with 3, 1.15-1.20 detached. A node
// gets one scheduler thread more than its workers by default
// (runtime/node/node.hpp), so the model math never holds every thread.
//
// One step, in phases ({...}: what moves it on; holding pushes once the
// ticket is in, in async and ssp):
//
//       start (ssp)                        start (async, sync)
//            |                                    |
//            v                                    v
//     +-------------+     {admitted}       +-------------+
//  +->|  admitting  |--------------------->|   pulling   |<----------+<--+
//  |  +-------------+                      +-------------+           |   |
//  |                                              | {every pull in}: |   |
//  |                                              v  compute         |   |
//  |         push (ssp)                    +-------------+  push     |   |
//  +---------------------------------------|   holding   |-----------+   |
//                                          +-------------+ (async, sync) |
//                                                 | {batch not finite}   |
//                                                 v                      |
//                                          +-------------+   {skip}      |
//                                          |   verdict   |---------------+
//                                          +-------------+
//
//  async: the ticket (the global step the push makes, from the supervisor) is
//         asked for right after each push and travels with the pulls; holding
//         waits for it. --pipeline: the next pulls go out at the compute
//         (with a row variable: with the push, in one message).
//  ssp:   the coordinator first admits the step (staleness bound), then as async;
//         pipelined with a row variable, it admits the next step at the compute
//         and that batch's rows are pulled then.
//  sync:  no tickets; the pulls wait at the shards for the next global step
//         (the token barrier).
//  The job is over (the worker leaves) when a ticket is -1 or, in sync, when
//  the pulled step is the last one; a worker told to stop leaves after its
//  next push; a supervisor that refuses the bad batch ends the job.
#pragma once

#include "protocol/messages.hpp"
#include "actors/worker_config.hpp"

namespace downpour {

// The worker waits for start_atom.
worker_actor spawn_worker(caf::actor_system& sys, worker_config cfg);

}  // namespace downpour
