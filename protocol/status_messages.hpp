// What `downpour status` asks of the shards and the sync coordinator: counts
// and positions, no tensors (part of protocol/messages.hpp's type-ID block).
#pragma once

#include <cstdint>
#include <vector>

#include "data/read_position.hpp"

namespace downpour {

// Shard -> chief: what `downpour status` shows of a shard; no tensors.
struct shard_stats {
  std::int64_t step = 0;
  std::vector<std::uint64_t> ranges;  // offset/size pairs
  std::int64_t dropped = 0;
  std::int64_t rejected = 0;
  std::int64_t replayed = 0;
  std::uint64_t rows_held = 0;  // rows of the sparse variable created here
  std::vector<worker_position> positions;  // as in a snapshot
  // Rows pulled and pushed per second lately (reporting/count_rate.hpp).
  std::uint64_t keys_pulled_per_s = 0;
  std::uint64_t keys_pushed_per_s = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, shard_stats& x) {
  return f(caf::meta::type_name("shard_stats"), x.step, x.ranges, x.dropped, x.rejected, x.replayed,
           x.rows_held, x.positions, x.keys_pulled_per_s, x.keys_pushed_per_s);
}

// Coordinator -> chief: the live workers and the dead ones (gone, not back).
struct worker_stats {
  std::vector<std::uint32_t> live;
  std::vector<std::uint32_t> gone;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, worker_stats& x) {
  return f(caf::meta::type_name("worker_stats"), x.live, x.gone);
}

}  // namespace downpour
