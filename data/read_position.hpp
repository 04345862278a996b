// Where a worker's streamed input stands: saved with every checkpoint (each
// push carries its worker's position to the shards), so that a resumed job
// reads on from there instead of from the beginning.
#pragma once

#include <cstdint>
#include <vector>

namespace downpour {

struct read_position {
  // The shard plan it belongs to (data/shard_plan.hpp fingerprint); 0: no
  // position, start at the beginning.
  std::uint64_t plan = 0;
  std::uint64_t pass = 0;  // 0-based
  // The shuffle window the next example comes from: it began at this index
  // of the pass's unit order, at this byte of that unit's file (unit_start:
  // at the unit's own beginning), and `taken` of its examples are used.
  std::uint64_t unit = 0;
  std::uint64_t offset = unit_start;
  std::uint64_t taken = 0;
  std::uint64_t batches = 0;   // handed out since the job began: the newer of two has more
  std::uint64_t examples = 0;  // handed out in this pass
  static constexpr std::uint64_t unit_start = ~std::uint64_t{0};
};

struct worker_position {
  std::uint32_t worker = 0;
  read_position at;
};

// The newer of two positions of one worker.
inline const read_position& newer(const read_position& a, const read_position& b) {
  return b.batches > a.batches ? b : a;
}

// Adds (or updates) worker's entry with the newer position; entries stay
// sorted by worker.
void merge_position(std::vector<worker_position>& into, std::uint32_t worker,
                    const read_position& at);

}  // namespace downpour
