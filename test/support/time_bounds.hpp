// The tests' failure bounds, longer in instrumented builds. A sanitizer build
// (DOWNPOUR_SANITIZE=ON) runs 2-5 times slower, so a bound that only says "this
// has hung" would fail there for no reason but speed; CMakeLists.txt sets
// DOWNPOUR_TEST_TIME_SCALE (4 there, 1 otherwise) and the variable of that name
// in the environment overrides it. Only failure bounds are scaled: a timeout a
// test is about (--node-timeout, --connect-timeout) keeps its value.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>

#ifndef DOWNPOUR_TEST_TIME_SCALE
#define DOWNPOUR_TEST_TIME_SCALE 1
#endif

namespace downpour::testing {

// The factor on failure bounds: DOWNPOUR_TEST_TIME_SCALE from the environment
// if set there, the build's otherwise.
inline double time_scale() {
  const char* text = std::getenv("DOWNPOUR_TEST_TIME_SCALE");
  if (!text || !*text) return DOWNPOUR_TEST_TIME_SCALE;
  char* end = nullptr;
  const double scale = std::strtod(text, &end);
  if (*end != '\0' || !std::isfinite(scale) || scale < 1)
    throw std::invalid_argument("DOWNPOUR_TEST_TIME_SCALE=" + std::string(text) +
                                " is not a number >= 1");
  return scale;
}

// bound, times time_scale().
template <class Rep, class Period>
std::chrono::duration<Rep, Period> scaled(std::chrono::duration<Rep, Period> bound) {
  return std::chrono::duration_cast<std::chrono::duration<Rep, Period>>(
      std::chrono::duration<double, Period>(bound) * time_scale());
}

}  // namespace downpour::testing
