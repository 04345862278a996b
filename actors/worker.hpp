// A worker: pull all shards (in parallel) -> compute the gradient of its own
// batch -> push to all shards, until the job is over. Runs on the scheduler,
// not detached: the shard then applies a pushed gradient on the thread (and
// core) whose cache holds it, and a node has no more threads than cores.
// Measured on 2 cores, 2 workers + 2 shards in one process: 1.00 ms/global
// step with 2 scheduler threads, 1.04 with 3, 1.15-1.20 detached. A node
// gets one scheduler thread more than its workers by default
// (runtime/node.hpp), so the model math never holds every thread.
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
//         waits for it. --pipeline: the next pulls go out at the compute.
//  ssp:   the coordinator first admits the step (staleness bound), then as async.
//  sync:  no tickets; the pulls wait at the shards for the next global step
//         (the token barrier).
//  The job is over (the worker leaves) when a ticket is -1 or, in sync, when
//  the pulled step is the last one; a worker told to stop leaves after its
//  next push; a supervisor that refuses the bad batch ends the job.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "actors/messages.hpp"
#include "config/options.hpp"
#include "data/idx.hpp"
#include "model/schedule.hpp"
#include "model/shape.hpp"
#include "runtime/log.hpp"
#include "runtime/placement.hpp"

namespace downpour {

struct worker_config {
  std::uint32_t index = 0;
  model_shape shape;
  std::size_t batch_size = 100;
  float l2 = 1e-4f;
  std::int64_t log_every = 10;  // local steps between progress lines
  std::uint64_t batch_seed = 0;
  std::shared_ptr<const mnist_data> data;
  std::vector<shard_actor> shards;
  std::vector<shard_layout> layouts;  // one per shard
  supervisor_actor supervisor;
  coordinator_actor coordinator;
  train_mode mode = train_mode::async;
  std::int64_t last_step = 0;
  std::size_t gradients_per_step = 1;  // sync: pushes per global step (TF counts gradients)
  // async: pull the next step's parameters while computing this step's
  // gradient, so the shards' update and the transfer overlap the compute. The
  // pulled parameters then lack the worker's own last gradient (one step more
  // staleness), so a one-worker job no longer matches the reference.
  bool pipeline = false;
  wire_dtype wire = wire_dtype::fp32;  // pushes between nodes
  // The shards' learning-rate schedule: between nodes a worker applies its
  // own update to its copy and pulls only what others changed (replay_offer).
  lr_schedule schedule;
  logger log;  // this worker's node
};

// The worker waits for start_atom.
worker_actor spawn_worker(caf::actor_system& sys, worker_config cfg);

}  // namespace downpour
