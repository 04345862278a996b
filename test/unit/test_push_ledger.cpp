// The failover's plan from the shards' fence reports (protocol/push_ledger.hpp):
// which pushes each shard owes, at which step, and when a shard's window
// of recent pushes is too short to tell.
#include <doctest/doctest.h>

#include <algorithm>

#include "protocol/push_ledger.hpp"

namespace test_push_ledger {

using namespace downpour;

namespace {

fence_report report_of(std::int64_t step, std::vector<push_id> recent) {
  return fence_report{step, std::move(recent)};
}

std::vector<std::uint64_t> seqs(const failover_plan& p) {
  std::vector<std::uint64_t> out;
  for (const auto& x : p.owed) out.push_back(x.seq);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("every shard stands at the furthest step and owes what another took that it lacks") {
  const auto plans = plan_failover({report_of(5, {{10, 2}, {11, 3}, {12, 4}}),
                                    report_of(4, {{10, 2}, {11, 3}, {13, 4}}),
                                    report_of(3, {{10, 2}, {11, 3}})});
  REQUIRE(plans.size() == 3);
  for (const auto& p : plans) CHECK(p.step == 5);
  CHECK(seqs(plans[0]) == std::vector<std::uint64_t>{13});
  CHECK(seqs(plans[1]) == std::vector<std::uint64_t>{12});
  CHECK(seqs(plans[2]) == std::vector<std::uint64_t>{12, 13});
  // A push is owed with the step it was taken at where it was taken.
  CHECK(plans[2].owed.front().step == 4);
  const auto owed = owed_pushes(plans);
  REQUIRE(owed.size() == 2);
  CHECK(owed[0] == std::pair<std::uint64_t, std::uint32_t>{12, 2});
  CHECK(owed[1] == std::pair<std::uint64_t, std::uint32_t>{13, 2});
}

TEST_CASE("shards that took the same pushes owe nothing, whatever their order") {
  const auto plans =
      plan_failover({report_of(2, {{1, 0}, {2, 1}}), report_of(2, {{2, 0}, {1, 1}})});
  CHECK(plans[0].owed.empty());
  CHECK(plans[1].owed.empty());
  CHECK(owed_pushes(plans).empty());
}

TEST_CASE("a sync round no shard completed is owed nowhere: it is trained again") {
  // Round 3 in progress on both (step 3), round 2 completed only on the first.
  const auto plans = plan_failover({report_of(3, {{1, 2}, {2, 2}, {7, 3}}),
                                    report_of(2, {{1, 2}, {8, 3}})});
  CHECK(plans[0].step == 3);
  CHECK(seqs(plans[0]).empty());  // 8 is of the round in progress
  CHECK(seqs(plans[1]) == std::vector<std::uint64_t>{2});
}

TEST_CASE("a sync shard that completed a round with other gradients owes none of that round") {
  // Backup workers: a round of one gradient, completed with worker 1's push
  // on the first shard and worker 2's on the second.
  fence_report a{6, {{11, 5}}, 6}, b{6, {{12, 5}}, 6};
  const auto plans = plan_failover({a, b});
  CHECK(plans[0].owed.empty());
  CHECK(plans[1].owed.empty());
}

TEST_CASE("a shard whose window is full owes only pushes newer than the oldest it remembers") {
  std::vector<push_id> full, other;
  for (std::uint64_t i = 0; i < push_ledger::kept; ++i)
    full.push_back({1000 + i, static_cast<std::int64_t>(200 + i)});
  other.push_back({5, 10});  // long before the full window: taken there and forgotten
  other.push_back({6, 2000});  // newer than all of it: never seen there
  const auto plans = plan_failover({report_of(1224, full), report_of(2001, other)});
  CHECK(seqs(plans[0]) == std::vector<std::uint64_t>{6});
}

TEST_CASE("a ledger keeps the newest pushes, owes each push once and forgets it once filled") {
  push_ledger l;
  for (std::uint64_t i = 1; i <= push_ledger::kept + 5; ++i)
    l.taken({i, static_cast<std::int64_t>(i)});
  CHECK(l.recent().size() == push_ledger::kept);
  CHECK_FALSE(l.has_taken(5));
  CHECK(l.has_taken(6));
  l.owe({{9000, 3}, {9000, 3}, {6, 1}});  // 6 is taken already
  REQUIRE(l.owed().size() == 1);
  CHECK(l.owed_at(9000) == 3);
  l.filled({9000, 3});
  CHECK(l.owed().empty());
  CHECK(l.has_taken(9000));
  CHECK_FALSE(l.owed_at(9000));
}

}  // namespace test_push_ledger
