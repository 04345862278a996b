// How many updates a job applied and lost, and how long training paused to
// recover from a lost ps: what the end of the job (summary.json, the final
// line) and /metrics report. The stop supervisor fills it; the chief reads it
// at the end. Shared by the two (one per chief), so guarded by a mutex.
//
// An update is applied once every shard answered its push (async, ssp) or
// its round completed (sync), counted from step 0: a job started from a
// checkpoint at step S counts its S updates. A restore after a lost ps rolls
// the shards back from the step they had reached to the checkpoint's; those
// updates stay applied and are counted lost too, so at the end
// applied - lost == the final global step. The two are counted apart (the
// answers, the rollbacks), so that equality checks the counting. A failover
// to backups (--ps-replicas 2) rolls nothing back: applied == the final step,
// and lost counts the updates a lost primary had taken alone.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace downpour {

struct update_counts {
  std::int64_t applied = 0;
  std::int64_t lost = 0;
  double failover_pause_s = 0.0;
};

class update_tally {
 public:
  explicit update_tally(std::int64_t start_step = 0)
      : applied_(std::max<std::int64_t>(start_step, 0)) {}

  // Every shard applied n more updates.
  void record_applied(std::int64_t n) {
    std::lock_guard<std::mutex> lock(mutex_);
    applied_ += std::max<std::int64_t>(n, 0);
  }
  // A failover aligned every shard at `step`, the steps applied counted so
  // far being `settled`: from now on `step` are applied (a sync round
  // reported but completed by no shard is not).
  void record_realigned(std::int64_t settled, std::int64_t step) {
    std::lock_guard<std::mutex> lock(mutex_);
    applied_ += step - settled;
  }
  // The shards stood at `reached` (every update of the steps before it
  // applied) and were restored to `restored`: the steps between are lost.
  void record_rollback(std::int64_t reached, std::int64_t restored) {
    record_lost(reached - restored);
  }
  // n updates applied are gone from the parameters (a failover's: taken by a
  // lost primary alone).
  void record_lost(std::int64_t n) {
    std::lock_guard<std::mutex> lock(mutex_);
    lost_ += std::max<std::int64_t>(n, 0);
  }
  // Training paused `seconds`, from the loss of a ps to its first step after
  // the restore.
  void record_failover_pause(double seconds) {
    std::lock_guard<std::mutex> lock(mutex_);
    pause_s_ += std::max(seconds, 0.0);
  }
  // A failover's pushes owed (seq, shards owing it): each lost until every
  // shard owing it took its part (filled).
  void record_owed(const std::vector<std::pair<std::uint64_t, std::uint32_t>>& owed) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [seq, shards] : owed) owed_[seq] += shards;
  }
  void record_filled(std::uint64_t seq) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = owed_.find(seq);
    if (it != owed_.end() && --it->second == 0) owed_.erase(it);
  }
  update_counts counts() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return {applied_, lost_ + static_cast<std::int64_t>(owed_.size()), pause_s_};
  }

 private:
  mutable std::mutex mutex_;
  std::int64_t applied_ = 0;
  std::int64_t lost_ = 0;
  double pause_s_ = 0.0;
  std::map<std::uint64_t, std::uint32_t> owed_;
};

}  // namespace downpour
