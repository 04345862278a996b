// Sync rounds and refused pushes: a refused push for the round in progress
// counts toward the round's size but never into its mean, so a worker whose
// pushes are all refused cannot leave the others waiting for a gradient that
// will not come, and a round of nothing but refusals takes no step.
#include <doctest/doctest.h>

#include "actors/parameter_shard.hpp"
#include "sync_shard_fixture.hpp"

namespace test_sync_refusals {

using namespace downpour;

using refusal_fixture = downpour::testing::sync_shard_fixture;

TEST_CASE_FIXTURE(refusal_fixture,
                  "a refused push for the round in progress completes the round with the mean of "
                  "the accepted gradients alone") {
  auto shard = sync_shard(2, {1.0f, 1.0f}, 3);
  push(shard, 0, 1, {1.0f});  // worker 1's push has the wrong length: refused
  CHECK(snapshot(shard).step == 0);
  push(shard, 0, 0, {2.0f, 4.0f});
  auto s = snapshot(shard);
  CHECK(s.step == 1);
  CHECK(s.rejected == 1);
  // Worker 0's gradient alone at lr 0.01, not halved by the refused one.
  CHECK(s.params.values[0] == doctest::Approx(0.98));
  CHECK(s.params.values[1] == doctest::Approx(0.96));
  // The next round counts afresh: one refusal alone completes nothing.
  push(shard, 1, 1, {1.0f});
  CHECK(snapshot(shard).step == 1);
  stop(shard);
}

TEST_CASE_FIXTURE(refusal_fixture,
                  "a refused push stamped for another round counts toward none") {
  auto shard = sync_shard(2, {1.0f}, 3);
  push(shard, 5, 1, {1.0f});  // from the future: refused, not this round's
  push(shard, 0, 0, {1.0f});
  auto s = snapshot(shard);
  CHECK(s.step == 0);
  CHECK(s.rejected == 1);
  push(shard, 0, 1, {1.0f});
  CHECK(snapshot(shard).step == 1);
  stop(shard);
}

TEST_CASE_FIXTURE(refusal_fixture,
                  "a round whose every push was refused takes no step and answers the pulls "
                  "waiting for the next one, so its workers push again") {
  auto shard = sync_shard(2, {1.0f}, 3);
  auto w0 = request<pull_reply>(shard, pull_atom_v, std::int64_t{1});
  auto w1 = request<pull_reply>(shard, pull_atom_v, std::int64_t{1});
  push(shard, 0, 0, {1.0f, 2.0f});
  CHECK(!w0->has_value());
  push(shard, 0, 1, {1.0f, 2.0f});
  REQUIRE(w0->has_value());
  REQUIRE(w1->has_value());
  CHECK((*w0)->step == 0);
  CHECK((*w1)->step == 0);
  auto s = snapshot(shard);
  CHECK(s.step == 0);
  CHECK(s.rejected == 2);
  CHECK(s.params.values[0] == 1.0f);
  push(shard, 0, 0, {1.0f});
  push(shard, 0, 1, {3.0f});
  s = snapshot(shard);
  CHECK(s.step == 1);
  CHECK(s.params.values[0] == doctest::Approx(0.98));
  stop(shard);
}

TEST_CASE_FIXTURE(refusal_fixture,
                  "at the last step a refused push counts toward no round and the shard stays "
                  "there") {
  auto shard = sync_shard(1, {1.0f}, 3);
  for (std::int64_t step = 0; step < 3; ++step) push(shard, step, 0, {1.0f});
  REQUIRE(snapshot(shard).step == 3);
  auto late = request<pull_reply>(shard, pull_atom_v, std::int64_t{4});
  push(shard, 3, 1, {1.0f, 1.0f});
  CHECK(!late->has_value());
  auto s = snapshot(shard);
  CHECK(s.step == 3);
  CHECK(s.rejected == 1);
  stop(shard);
}

}  // namespace test_sync_refusals
