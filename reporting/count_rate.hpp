// The rate of a growing count as `downpour status` shows it (a shard's keys
// per second): over the time since an earlier reading at least a second
// back, or since the start before there is one. Readings in quick
// succession so neither divide by almost no time nor report a rate of long
// ago; Prometheus' rate() over the counters is the other view.
#pragma once

#include <cstdint>

namespace downpour {

class count_rate {
 public:
  explicit count_rate(double min_interval_s = 1.0) : min_interval_s_(min_interval_s) {}

  // The count stood at `count` at now_s (seconds on any steady clock).
  void start(double now_s, std::uint64_t count) { base_ = newest_ = {now_s, count}; }

  // Per second, with the count now at `count`; 0 over no time.
  double take(double now_s, std::uint64_t count) {
    if (now_s - newest_.at_s >= min_interval_s_) {
      base_ = newest_;
      newest_ = {now_s, count};
    }
    const double dt = now_s - base_.at_s;
    return dt > 0 && count >= base_.count ? static_cast<double>(count - base_.count) / dt : 0.0;
  }

 private:
  struct reading {
    double at_s = 0.0;
    std::uint64_t count = 0;
  };
  double min_interval_s_;
  reading base_, newest_;
};

}  // namespace downpour
