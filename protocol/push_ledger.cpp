#include "protocol/push_ledger.hpp"

#include <algorithm>
#include <map>
#include <unordered_set>

namespace downpour {

void push_ledger::taken(push_id id) {
  recent_.push_back(id);
  if (recent_.size() > kept) recent_.pop_front();
}

bool push_ledger::has_taken(std::uint64_t seq) const {
  return std::any_of(recent_.rbegin(), recent_.rend(),
                     [&](const push_id& x) { return x.seq == seq; });
}

std::optional<std::int64_t> push_ledger::owed_at(std::uint64_t seq) const {
  for (const auto& x : owed_)
    if (x.seq == seq) return x.step;
  return std::nullopt;
}

void push_ledger::owe(const std::vector<push_id>& ids) {
  for (const auto& id : ids)
    if (!owed_at(id.seq) && !has_taken(id.seq)) owed_.push_back(id);
}

void push_ledger::filled(push_id id) {
  owed_.erase(std::remove_if(owed_.begin(), owed_.end(),
                             [&](const push_id& x) { return x.seq == id.seq; }),
              owed_.end());
  taken(id);
}

namespace {

// Pushes reach shards in orders that differ by the pushes in flight: far
// fewer than this many steps.
constexpr std::int64_t order_margin = 64;

// The earliest step from which the report's shard would remember a push.
std::int64_t remembers_from(const fence_report& r) {
  if (r.recent.size() < push_ledger::kept) return r.complete_before;
  std::int64_t oldest = r.recent.front().step;
  for (const auto& x : r.recent) oldest = std::min(oldest, x.step);
  return std::max(oldest + order_margin, r.complete_before);
}

}  // namespace

std::vector<failover_plan> plan_failover(const std::vector<fence_report>& reports) {
  std::int64_t step = 0;
  std::vector<std::unordered_set<std::uint64_t>> seen(reports.size());
  for (std::size_t k = 0; k < reports.size(); ++k) {
    step = std::max(step, reports[k].step);
    for (const auto& x : reports[k].recent) seen[k].insert(x.seq);
  }
  std::vector<failover_plan> plans(reports.size(), failover_plan{step, {}});
  for (std::size_t k = 0; k < reports.size(); ++k) {
    const auto from = remembers_from(reports[k]);
    std::unordered_set<std::uint64_t> owed;
    for (std::size_t j = 0; j < reports.size(); ++j) {
      if (j == k) continue;
      for (const auto& x : reports[j].recent)
        // A sync push of the round in progress (its step not yet taken)
        // belongs to a round no shard completed: the round is trained again.
        if (x.step >= from && x.step < step && seen[k].count(x.seq) == 0 &&
            owed.insert(x.seq).second)
          plans[k].owed.push_back(x);
    }
  }
  return plans;
}

std::vector<std::pair<std::uint64_t, std::uint32_t>> owed_pushes(
    const std::vector<failover_plan>& plans) {
  std::map<std::uint64_t, std::uint32_t> count;
  for (const auto& p : plans)
    for (const auto& x : p.owed) ++count[x.seq];
  return {count.begin(), count.end()};
}

}  // namespace downpour
