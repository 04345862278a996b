// Durations in seconds, as options and logs give them (doubles), to and from
// the clocks: the one place that converts.
#pragma once

#include <chrono>

#include "caf/timespan.hpp"

namespace downpour {

// seconds as CAF's timespan (also the steady clock's duration), truncated to
// whole nanoseconds.
inline caf::timespan timespan_of(double seconds) {
  return std::chrono::duration_cast<caf::timespan>(std::chrono::duration<double>(seconds));
}

// Seconds on the steady clock from t until now.
inline double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace downpour
