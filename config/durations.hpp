// Durations in seconds, as options and logs give them (doubles), to and from
// the clocks: the one place that converts.
#pragma once

#include <algorithm>
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

// A point on the steady clock that something must be done by.
class deadline {
 public:
  using clock = std::chrono::steady_clock;

  explicit deadline(caf::timespan from_now) : at_(clock::now() + from_now) {}

  // seconds from now, as options give them.
  static deadline in_seconds(double seconds) { return deadline{timespan_of(seconds)}; }

  // What is left of it; zero once it has passed, never less.
  caf::timespan left() const {
    return std::max(std::chrono::duration_cast<caf::timespan>(at_ - clock::now()),
                    caf::timespan::zero());
  }

  bool passed() const { return clock::now() >= at_; }

 private:
  clock::time_point at_;
};

}  // namespace downpour
