// The pulls of several trainers of one process as one message per shard:
// their keys' union, so a key several of them touch travels once, and each
// trainer's rows cut back out of the union's reply (actors/exchange.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "protocol/floats.hpp"
#include "model/layout.hpp"

namespace downpour {

struct merged_keys {
  std::vector<std::uint64_t> keys;  // ascending, unique
  // Per list merged, the index in keys of each of its keys, in its order.
  std::vector<std::vector<std::size_t>> at;
};

// Lists of ascending keys (a row_pull's) merged; an empty one takes no key.
merged_keys merge_keys(const std::vector<const std::vector<std::uint64_t>*>& lists);

// The union's values (each key width_of(key) floats, in its order) cut
// into each merged list's values, in that list's order. Throws
// std::invalid_argument when values do not hold the union's floats.
std::vector<floats> split_rows(const merged_keys& merged, const floats& values,
                               const row_space& space);

}  // namespace downpour
