// What makes a failover lose no update (--ps-replicas 2, docs/failure-model.md):
// every push of a trainer with a keeper carries a sequence number
// (push_msg::seq) that no other push of the job has. A shard
// remembers the numbers of the pushes it took last, with the step each was
// taken at; at a failover the chief compares them across shards. A push some
// shard took and another never saw (its primary died with it) is owed
// there: the shard stands at the step that counts it, and takes its part
// when the trainer's node sends the push again (resend_atom).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "caf/all.hpp"

namespace downpour {

// A push by its sequence number, and the global step it was taken at.
struct push_id {
  std::uint64_t seq = 0;
  std::int64_t step = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, push_id& x) {
  return f(caf::meta::type_name("push_id"), x.seq, x.step);
}

// Shard -> chief, fenced: its step, and the pushes it took last. A push of
// a step before `complete_before` that it lacks is not owed here: sync, a
// round it completed (with backup workers, another shard may have completed
// the same round with other gradients); async and ssp: 0.
struct fence_report {
  std::int64_t step = 0;
  std::vector<push_id> recent;
  std::int64_t complete_before = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, fence_report& x) {
  return f(caf::meta::type_name("fence_report"), x.step, x.recent, x.complete_before);
}

// Chief -> shard: the step every shard stands at after the failover, and
// the pushes this shard owes (taken elsewhere, each with the step it was
// taken at there: its part here is applied with that step's schedule).
struct failover_plan {
  std::int64_t step = 0;
  std::vector<push_id> owed;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, failover_plan& x) {
  return f(caf::meta::type_name("failover_plan"), x.step, x.owed);
}

// A shard's pushes taken last and owed; a new backup takes it with the state.
class push_ledger {
 public:
  // Pushes in flight at a loss are a few per trainer; this many recent
  // ones cover them with a wide margin (plan_failover).
  static constexpr std::size_t kept = 1024;

  void taken(push_id id);
  bool has_taken(std::uint64_t seq) const;
  // The step an owed push was taken at elsewhere, if this shard owes it.
  std::optional<std::int64_t> owed_at(std::uint64_t seq) const;
  void owe(const std::vector<push_id>& ids);
  void filled(push_id id);

  const std::deque<push_id>& recent() const { return recent_; }
  const std::vector<push_id>& owed() const { return owed_; }

  template <class Inspector>
  friend typename Inspector::result_type inspect(Inspector& f, push_ledger& x) {
    return f(caf::meta::type_name("push_ledger"), x.recent_, x.owed_);
  }

 private:
  std::deque<push_id> recent_;
  std::vector<push_id> owed_;
};

// The failover of every shard from their fences' reports, in their order:
// each stands at the furthest step, and owes the pushes another took that
// it lacks (of steps before it: a sync round in progress is trained again). A shard whose window of recent pushes is full cannot tell a
// push it took long ago from one it never saw: it owes only pushes taken
// elsewhere after the oldest it remembers, with a margin for the order
// pushes reach different shards in.
std::vector<failover_plan> plan_failover(const std::vector<fence_report>& reports);

// The distinct pushes some shard owes, and how many shards owe each.
std::vector<std::pair<std::uint64_t, std::uint32_t>> owed_pushes(
    const std::vector<failover_plan>& plans);

}  // namespace downpour
