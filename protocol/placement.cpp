#include "protocol/placement.hpp"

#include <algorithm>
#include <cstring>

namespace downpour {

std::size_t shard_layout::size() const {
  std::size_t n = 0;
  for (const auto& r : ranges) n += r.size;
  return n;
}

namespace {

std::vector<shard_layout> balanced(std::size_t total, std::size_t num_shards) {
  std::vector<shard_layout> out(num_shards);
  std::size_t offset = 0;
  for (std::size_t k = 0; k < num_shards; ++k) {
    std::size_t size = total / num_shards + (k < total % num_shards ? 1 : 0);
    if (size > 0) out[k].ranges.push_back({offset, size});
    offset += size;
  }
  return out;
}

std::vector<shard_layout> round_robin(const model_layout& model, std::size_t num_shards) {
  std::vector<shard_layout> out(num_shards);
  const auto& vars = model.variables();
  for (std::size_t i = 0; i < vars.size(); ++i)
    out[i % num_shards].ranges.push_back({vars[i].offset, vars[i].size()});
  return out;
}

}  // namespace

std::vector<shard_layout> partition(const model_layout& model, std::size_t num_shards,
                                    placement_kind placement) {
  if (placement == placement_kind::round_robin) return round_robin(model, num_shards);
  return balanced(model.size(), num_shards);
}

shard_layout layout_from_pairs(const std::vector<std::uint64_t>& pairs) {
  shard_layout layout;
  for (std::size_t i = 0; i + 1 < pairs.size(); i += 2)
    layout.ranges.push_back(
        {static_cast<std::size_t>(pairs[i]), static_cast<std::size_t>(pairs[i + 1])});
  return layout;
}

std::vector<float> gather(const shard_layout& layout, const float* full) {
  std::vector<float> part(layout.size());
  gather_into(layout, full, part.data());
  return part;
}

void gather_into(const shard_layout& layout, const float* full, float* part) {
  std::size_t at = 0;
  for (const auto& r : layout.ranges) {
    std::memcpy(part + at, full + r.offset, r.size * sizeof(float));
    at += r.size;
  }
}

bool covers_whole(const shard_layout& layout, std::size_t n) {
  std::size_t next = 0;
  for (const auto& r : layout.ranges) {
    if (r.offset != next) return false;
    next += r.size;
  }
  return next == n;
}

void scatter(const shard_layout& layout, const float* part, float* full) {
  std::size_t at = 0;
  for (const auto& r : layout.ranges) {
    std::memcpy(full + r.offset, part + at, r.size * sizeof(float));
    at += r.size;
  }
}

row_range rows_of_shard(std::uint64_t rows, std::size_t num_shards, std::size_t k) {
  auto bound = [&](std::size_t i) {
    return static_cast<std::uint64_t>(static_cast<unsigned __int128>(rows) * i / num_shards);
  };
  return {bound(k), bound(k + 1)};
}

std::vector<std::uint64_t> row_boundaries(std::uint64_t rows, std::size_t num_shards) {
  std::vector<std::uint64_t> b;
  for (std::size_t k = 0; k < num_shards; ++k)
    b.push_back(rows_of_shard(rows, num_shards, k).first);
  b.push_back(rows);
  return b;
}

}  // namespace downpour
