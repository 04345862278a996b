// A worker: pull all shards (in parallel) -> compute the gradient of its own
// batch -> push to all shards, until the job is over. Runs on the scheduler,
// not detached: the shard then applies a pushed gradient on the thread (and
// core) whose cache holds it, and a node has no more threads than cores.
// Measured on 2 cores, 2 workers + 2 shards in one process: 1.00 ms/global
// step with 2 scheduler threads, 1.04 with 3, 1.15-1.20 detached. A node
// gets one scheduler thread more than its workers by default
// (runtime/node/node.hpp), so the model math never holds every thread.
//  async: a step ticket from the stop supervisor travels with the pulls.
//  ssp:   the coordinator first admits the step (staleness bound), then as async.
//  sync:  pulls wait at the shards for the next global step (the token
//         barrier); the job is over when the pulled step is the last one.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "actors/log.hpp"
#include "actors/messages.hpp"
#include "actors/placement.hpp"
#include "config/options.hpp"
#include "data/idx.hpp"
#include "model/schedule.hpp"
#include "model/shape.hpp"

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
