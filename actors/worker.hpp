// A worker: pull all shards (in parallel) -> compute the gradient of its own
// batch -> push to all shards, until the stop supervisor says stop. Runs
// detached: the model math blocks only its own thread.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "actors/messages.hpp"
#include "data/idx.hpp"
#include "model/shape.hpp"
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
};

// The worker waits for start_atom.
worker_actor spawn_worker(caf::actor_system& sys, worker_config cfg);

}  // namespace downpour
