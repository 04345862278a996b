// A shard's record of the rows each worker pulled, on CAF's deterministic
// scheduler: a pipelined worker pulls the next batch's rows before it pushes
// the gradient of the batch in hand, so the shard holds a worker's last two
// pulls; each is pushed for once, and a push of rows no pull holds is
// refused and spends them.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "actors/parameter_shard.hpp"
#include "deterministic_fixture.hpp"

namespace test_shard_row_pulls {

using namespace downpour;

namespace {

constexpr std::uint64_t kRows = 1000;

struct rows_fixture : downpour::testing::deterministic_fixture {
  shard_actor rows_shard() { return deterministic_fixture::rows_shard(kRows); }

  void pull(const shard_actor& s, std::uint32_t worker, std::vector<std::uint64_t> keys) {
    ask<pull_reply>(s, pull_atom_v, row_pull{0, worker, key_list{std::move(keys)}});
  }

  // "accepted at STEP", or "ERRC: message".
  std::string push(const shard_actor& s, std::uint32_t worker, std::int64_t step,
                   std::vector<std::uint64_t> keys, std::vector<float> rows) {
    return push_verdict(s, push_msg{step, worker, shared_tensor{std::vector<float>{0.0f}},
                                    key_list{std::move(keys)}, tensor{rows}});
  }
};

}  // namespace

TEST_CASE_FIXTURE(rows_fixture,
                  "a push after the pull of the next batch is accepted, each pull is pushed for "
                  "once, and rows no pull holds are refused") {
  auto shard = rows_shard();
  // Pipelined: batch n's pull, batch n+1's, then n's push and n+1's.
  pull(shard, 1, {5, 9});
  pull(shard, 1, {6, 9});
  CHECK(push(shard, 1, 0, {5, 9}, {1.0f, 1.0f}) == "accepted at 1");
  pull(shard, 1, {7});
  CHECK(push(shard, 1, 0, {6, 9}, {1.0f, 1.0f}) == "accepted at 2");
  // Batch n's ids again: that pull was pushed for; n+2's pull is still held.
  CHECK(push(shard, 1, 1, {5, 9}, {1.0f, 1.0f}).rfind("unpulled_rows: ", 0) == 0);
  // The forged push spent the pulls held: the rows of n+2 need a new pull.
  CHECK(push(shard, 1, 1, {7}, {1.0f}).rfind("unpulled_rows: ", 0) == 0);
  pull(shard, 1, {7});
  CHECK(push(shard, 1, 2, {7}, {1.0f}) == "accepted at 3");
  CHECK(ask<shard_stats>(shard, stats_atom_v).rejected == 2);
  stop(shard);
}

TEST_CASE_FIXTURE(rows_fixture,
                  "a shard keeps a worker's last two pulls: a skipped batch's pull is "
                  "forgotten, another worker's pulls are its own") {
  auto shard = rows_shard();
  pull(shard, 1, {1});  // a bad batch, never pushed
  pull(shard, 1, {2});
  pull(shard, 2, {1});
  pull(shard, 1, {3});  // forgets {1}
  CHECK(push(shard, 1, 0, {1}, {1.0f}).rfind("unpulled_rows: ", 0) == 0);
  pull(shard, 1, {2});
  pull(shard, 1, {3});
  CHECK(push(shard, 1, 0, {2}, {1.0f}) == "accepted at 1");
  CHECK(push(shard, 1, 1, {3}, {1.0f}) == "accepted at 2");
  CHECK(push(shard, 2, 1, {1}, {1.0f}) == "accepted at 3");
  stop(shard);
}

}  // namespace test_shard_row_pulls
