// Sorting a batch's keys, which every sparse batch does before it pulls
// (shards and tables take keys ascending, each once): an LSD radix sort over
// only the bits the keys use, up to 11 a pass, with no branch on a key's
// value. A batch of 100 examples' ~1800 rows below 2^20 takes two passes.
#pragma once

#include <cstdint>
#include <vector>

namespace downpour {

// Reused batch after batch by one thread: once its buffers have grown, a
// sort allocates nothing.
class key_sorter {
 public:
  // keys ascending, and for each input key, the position it went to:
  // keys[position[i]] == input[i]. Equal keys keep their input order.
  struct sorted {
    const std::vector<std::uint64_t>& keys;
    const std::vector<std::uint32_t>& position;
  };
  // Throws std::length_error for 2^32 keys or more.
  sorted sort(const std::vector<std::uint64_t>& input);
  // The keys the last sort returned.
  const std::vector<std::uint64_t>& keys() const { return keys_; }

 private:
  void pass(unsigned shift, unsigned digit);

  std::vector<std::uint64_t> keys_;
  std::vector<std::uint32_t> origin_;  // per sorted key, its input position
  std::vector<std::uint64_t> next_keys_;
  std::vector<std::uint32_t> next_origin_;
  std::vector<std::uint32_t> position_;
  std::vector<std::uint32_t> starts_;
};

}  // namespace downpour
