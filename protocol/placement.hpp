// Which parts of the flat parameter buffer each parameter shard owns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "config/placement_kind.hpp"
#include "model/layout.hpp"

namespace downpour {

struct param_range {
  std::size_t offset = 0;
  std::size_t size = 0;
};

// The ranges one shard owns, in buffer order; its local storage is their
// concatenation.
struct shard_layout {
  std::vector<param_range> ranges;
  std::size_t size() const;
};

// balanced: num_shards contiguous near-equal ranges (sizes differ by at most one
// float). round_robin: whole variables in creation order, variable i on shard
// i % num_shards (TensorFlow's replica_device_setter); a shard may get nothing.
std::vector<shard_layout> partition(const model_layout& model, std::size_t num_shards,
                                    placement_kind placement);

// The layout carried in messages as offset/size pairs (shard_init, snapshots).
shard_layout layout_from_pairs(const std::vector<std::uint64_t>& pairs);

// Copies a shard's part out of, and back into, a full flat buffer.
std::vector<float> gather(const shard_layout& layout, const float* full);
void scatter(const shard_layout& layout, const float* part, float* full);

// gather() into a destination buffer of layout.size() floats (no allocation).
void gather_into(const shard_layout& layout, const float* full, float* part);

// The rows of a sparse variable of `rows` rows shard k of num_shards owns:
// [first, last), contiguous near-equal ranges in shard order (computed in
// 128 bits, so the top of the key space is never dropped). A model's rows
// are hashed from its features, so ranges are as balanced as a hash.
struct row_range {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
};
row_range rows_of_shard(std::uint64_t rows, std::size_t num_shards, std::size_t k);

// The shards' boundaries: num_shards + 1 values, b[k] = rows_of_shard(k).first.
std::vector<std::uint64_t> row_boundaries(std::uint64_t rows, std::size_t num_shards);

// True if the shard's part is the whole buffer of n floats, in order: then
// its part and the full buffer are the same thing and can be swapped, not copied.
bool covers_whole(const shard_layout& layout, std::size_t n);

}  // namespace downpour
