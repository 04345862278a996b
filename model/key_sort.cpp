#include "model/key_sort.hpp"

#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace downpour {

key_sorter::sorted key_sorter::sort(const std::vector<std::uint64_t>& input) {
  const std::size_t n = input.size();
  if (n > std::numeric_limits<std::uint32_t>::max())
    throw std::length_error("key sort: " + std::to_string(n) + " keys (at most 2^32 - 1)");
  keys_.assign(input.begin(), input.end());
  origin_.resize(n);
  std::uint64_t used = 0;  // the bits any key has set: passes beyond them move nothing
  for (std::size_t i = 0; i < n; ++i) {
    origin_[i] = static_cast<std::uint32_t>(i);
    used |= input[i];
  }
  next_keys_.resize(n);
  next_origin_.resize(n);
  for (unsigned shift = 0; shift < 64 && (used >> shift) != 0; shift += 8) pass(shift);
  position_.resize(n);
  for (std::size_t i = 0; i < n; ++i) position_[origin_[i]] = static_cast<std::uint32_t>(i);
  return {keys_, position_};
}

// One stable counting sort by the byte at shift.
void key_sorter::pass(unsigned shift) {
  starts_.fill(0);
  for (std::uint64_t k : keys_) ++starts_[(k >> shift) & 0xff];
  std::uint32_t total = 0;
  for (std::uint32_t& s : starts_) total += std::exchange(s, total);
  for (std::size_t i = 0; i < keys_.size(); ++i) {
    const std::uint32_t to = starts_[(keys_[i] >> shift) & 0xff]++;
    next_keys_[to] = keys_[i];
    next_origin_[to] = origin_[i];
  }
  keys_.swap(next_keys_);
  origin_.swap(next_origin_);
}

}  // namespace downpour
