// A parameter shard: owns ranges of the flat parameter buffer and their EMA
// shadows, serves pulls and applies pushed gradients.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "protocol/messages.hpp"
#include "actors/shard_config.hpp"
#include "model/sparse_table.hpp"
#include "reporting/status.hpp"

namespace downpour {

shard_actor spawn_parameter_shard(caf::actor_system& sys, shard_config cfg);

// A shard's answer to stats_atom as the status and the metrics show it.
inline shard_facts facts_of(const shard_stats& s) {
  shard_facts f;
  f.reachable = true;
  f.step = s.step;
  f.ranges = s.ranges;
  f.dropped = s.dropped;
  f.rejected = s.rejected;
  f.replayed = s.replayed;
  f.rows_held = s.rows_held;
  f.keys_pulled_per_s = s.keys_pulled_per_s;
  f.keys_pushed_per_s = s.keys_pushed_per_s;
  return f;
}

}  // namespace downpour
