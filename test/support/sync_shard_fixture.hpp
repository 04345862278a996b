// A deterministic fixture with one initialised sync shard at a time: the
// round tests of test_sync.cpp and test_sync_refusals.cpp push to it and read
// its snapshot.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "actors/parameter_shard.hpp"
#include "deterministic_fixture.hpp"

namespace downpour::testing {

struct sync_shard_fixture : deterministic_fixture {
  // A sync shard aggregating `required` gradients per step until last_step.
  shard_actor sync_shard(std::size_t required, const std::vector<float>& params,
                         std::int64_t last_step = 1000) {
    shard_config c;
    c.mode = train_mode::sync;
    c.required = required;
    c.last_step = last_step;
    return initialized_shard(c, params);
  }

  void push(const shard_actor& shard, std::int64_t stamp, std::uint32_t worker,
            std::vector<float> grad) {
    (*chief)->send(shard, push_atom_v, push_msg{stamp, worker, shared_tensor{std::move(grad)}});
    run();
  }

  shard_snapshot snapshot(const shard_actor& shard) {
    return ask<shard_snapshot>(shard, snapshot_atom_v);
  }
};

}  // namespace downpour::testing
