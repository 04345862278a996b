// Sizes computed from a sparse variable's row count N (up to 2^63): every
// product or sum of them goes through these, so an overflow is an error
// naming the size, never a small number that passes for a bound.
#pragma once

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace downpour {

// a * b, or std::overflow_error naming what was computed.
inline std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const char* what) {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a)
    throw std::overflow_error(std::string(what) + ": " + std::to_string(a) + " * " +
                              std::to_string(b) + " overflows 64 bits");
  return a * b;
}

// a + b, or std::overflow_error naming what was computed.
inline std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, const char* what) {
  if (b > std::numeric_limits<std::uint64_t>::max() - a)
    throw std::overflow_error(std::string(what) + ": " + std::to_string(a) + " + " +
                              std::to_string(b) + " overflows 64 bits");
  return a + b;
}

}  // namespace downpour
