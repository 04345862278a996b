// How many updates a job applied and lost, and how long training paused to
// recover from a lost ps: what the end of the job (summary.json, the final
// line) and /metrics report. The stop supervisor fills it; the chief reads it
// at the end. Shared by the two (one per chief), so guarded by a mutex.
#pragma once

#include <cstdint>
#include <mutex>

namespace downpour {

struct update_counts {
  std::int64_t applied = 0;  // updates the shards applied, counted from step 0
  std::int64_t lost = 0;     // of them, rolled back by a checkpoint restore
  double failover_pause_s = 0.0;
};

class update_tally {
 public:
  // The shards stood at `reached` (every push of the steps before it answered)
  // and were restored to `restored`: the steps between are lost.
  void record_rollback(std::int64_t reached, std::int64_t restored) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (reached > restored) lost_ += reached - restored;
  }
  // Training paused `seconds` while a lost ps was recovered: by a checkpoint
  // restore (with record_rollback) or by a replica taking over (lost stays 0).
  void record_failover_pause(double seconds) {
    std::lock_guard<std::mutex> lock(mutex_);
    pause_s_ += seconds;
  }
  // At global step `step`: applied - lost == step.
  update_counts at(std::int64_t step) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return {step + lost_, lost_, pause_s_};
  }

 private:
  mutable std::mutex mutex_;
  std::int64_t lost_ = 0;
  double pause_s_ = 0.0;
};

}  // namespace downpour
