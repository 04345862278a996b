#include "model/key_sort.hpp"

#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace downpour {
namespace {

// 2^11 counters (8 KiB) stay in the L1 cache beside a batch's keys.
constexpr unsigned kMaxDigitBits = 11;

}  // namespace

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
  // Passes of at most kMaxDigitBits, as few as the used bits need, evenly
  // wide: keys below 2^20 take two passes of 10 bits.
  unsigned bits = 0;
  while (bits < 64 && (used >> bits) != 0) ++bits;
  const unsigned passes = (bits + kMaxDigitBits - 1) / kMaxDigitBits;
  const unsigned digit = passes ? (bits + passes - 1) / passes : 0;
  for (unsigned p = 0; p < passes; ++p) pass(p * digit, digit);
  position_.resize(n);
  for (std::size_t i = 0; i < n; ++i) position_[origin_[i]] = static_cast<std::uint32_t>(i);
  return {keys_, position_};
}

// One stable counting sort by the digit of `digit` bits at shift.
void key_sorter::pass(unsigned shift, unsigned digit) {
  const std::uint64_t mask = (std::uint64_t{1} << digit) - 1;
  starts_.assign(std::size_t{1} << digit, 0);
  for (std::uint64_t k : keys_) ++starts_[(k >> shift) & mask];
  std::uint32_t total = 0;
  for (std::uint32_t& s : starts_) total += std::exchange(s, total);
  for (std::size_t i = 0; i < keys_.size(); ++i) {
    const std::uint32_t to = starts_[(keys_[i] >> shift) & mask]++;
    next_keys_[to] = keys_[i];
    next_origin_[to] = origin_[i];
  }
  keys_.swap(next_keys_);
  origin_.swap(next_origin_);
}

}  // namespace downpour
