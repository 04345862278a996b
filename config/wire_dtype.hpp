// How tensors travel between nodes: fp32 (bit-exact) or bf16 (the upper half
// of each float, rounded to nearest even: half the bytes, 8 significant bits).
// In-process messages are never serialized, so they keep full precision.
#pragma once

#include <cstdint>
#include <cstring>

namespace downpour {

enum class wire_dtype : std::uint8_t { fp32 = 0, bf16 = 1 };

// NaN stays NaN (a quiet one, sign kept) and +-inf stays +-inf, so a shard
// still sees and rejects a non-finite gradient sent as bf16.
inline std::uint16_t to_bf16(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x0040u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>(u >> 16);
}

inline float from_bf16(std::uint16_t h) {
  const std::uint32_t u = static_cast<std::uint32_t>(h) << 16;
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

}  // namespace downpour
