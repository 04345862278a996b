// The one 64-bit mixer of the sparse code: feature hashing, row hash slots,
// key-seeded initial values and the planted model's random draws all use it,
// so each is deterministic across platforms and shard counts.
#pragma once

#include <cmath>
#include <cstdint>

namespace downpour {

// SplitMix64's finalizer: a bijection of 64-bit values whose every output bit
// depends on every input bit.
inline std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

// mix64(a, b) given mix64(a): for a hash of many b under one a.
inline std::uint64_t mix64_premixed(std::uint64_t mixed_a, std::uint64_t b) {
  return mix64(mixed_a ^ (b + 0x9e3779b97f4a7c15ull));
}

// A value of the hash of (a, b): mix64 of a chained with b.
inline std::uint64_t mix64(std::uint64_t a, std::uint64_t b) {
  return mix64_premixed(mix64(a), b);
}

// A uniform double in (0, 1] from 64 random bits.
inline double unit_interval(std::uint64_t bits) {
  return (static_cast<double>(bits >> 11) + 1.0) * 0x1.0p-53;
}

// A standard normal draw (Box-Muller) from 64 random bits.
inline double standard_normal(std::uint64_t bits) {
  const double u1 = unit_interval(bits);
  const double u2 = unit_interval(mix64(bits));
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

}  // namespace downpour
