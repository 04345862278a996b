#include "model/sync_rule.hpp"

#include <algorithm>

namespace downpour {

stamp_verdict judge_stamp(std::int64_t stamp, std::int64_t global_step) {
  if (stamp < global_step) return stamp_verdict::stale;
  if (stamp > global_step) return stamp_verdict::future;
  return stamp_verdict::fresh;
}

std::size_t gradients_per_worker(std::size_t replicas_to_aggregate, std::size_t workers) {
  if (workers == 0) return 1;
  return std::max<std::size_t>(1, (replicas_to_aggregate + workers - 1) / workers);
}

std::size_t required_gradients(std::size_t replicas_to_aggregate, std::size_t workers,
                               std::size_t live_workers) {
  std::size_t deliverable = live_workers * gradients_per_worker(replicas_to_aggregate, workers);
  return std::max<std::size_t>(1, std::min(replicas_to_aggregate, deliverable));
}

bool may_advance(std::int64_t clock, const std::map<std::uint32_t, std::int64_t>& live_clocks,
                 std::int64_t staleness) {
  if (live_clocks.empty()) return true;
  std::int64_t slowest = live_clocks.begin()->second;
  for (const auto& [worker, c] : live_clocks) slowest = std::min(slowest, c);
  return clock - slowest <= staleness;
}

}  // namespace downpour
