// A replicated shard (--ps-replicas 2) on CAF's deterministic scheduler: the
// primary holds a push's reply until its backup acked the push, lets it go
// when the backup goes down, and its backup stands where it stands, bit for
// bit, dense and rows; a promoted backup takes pushes itself.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include "actors/parameter_shard.hpp"
#include "deterministic_fixture.hpp"

namespace test_shard_replicas {

using namespace downpour;

namespace {

using downpour::testing::random_floats;

template <class A, class B>
bool same_bits(const A& a, const B& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

using promises = std::vector<caf::typed_response_promise<std::int64_t>>;

struct replica_fixture : downpour::testing::deterministic_fixture {
  shard_config config(train_mode mode, std::size_t required = 1) {
    shard_config c;
    c.mode = mode;
    c.required = required;
    c.last_step = 1000;
    c.schedule = lr_schedule{0.05f, 0.9f, 7, false};
    return c;
  }

  // The chief's replica sets: backup takes primary's pushes.
  void pair_up(const caf::actor& primary, const caf::actor& backup) {
    (*chief)->send(caf::actor_cast<shard_actor>(primary), replica_atom_v, replica_set{{backup}, {}});
    (*chief)->send(caf::actor_cast<shard_actor>(backup), replica_atom_v, replica_set{{}, primary});
    run();
  }

  void pair_up(const shard_actor& primary, const shard_actor& backup) {
    pair_up(caf::actor_cast<caf::actor>(primary), caf::actor_cast<caf::actor>(backup));
  }

  // A backup that keeps the primary's pushes unanswered in acks (its
  // state it takes at once) until it gets a done_atom.
  caf::actor stalled_backup(std::shared_ptr<promises> acks) {
    return sys->spawn([=](caf::event_based_actor* self) -> caf::behavior {
      return {[=](replica_atom, replica_set&) { return std::int64_t{0}; },
              [=](done_atom) {  // the acks, from inside the actor
                for (auto& rp : *acks) rp.deliver(std::int64_t{1});
              },
              [=](replica_atom, replica_update& u) -> caf::result<std::int64_t> {
        if (u.pushes.empty()) return std::int64_t{0};
        auto rp = self->make_response_promise<std::int64_t>();
        acks->push_back(rp);
        return rp;
      }};
    });
  }

  push_msg dense_push(std::int64_t step, std::uint32_t worker, std::vector<float> grad) {
    return push_msg{step, worker, shared_tensor{std::move(grad)}};
  }

  // The two copies' snapshots agree in every field that a failover keeps.
  void check_same(const shard_actor& a, const shard_actor& b) {
    auto x = ask<shard_snapshot>(a, snapshot_atom_v);
    auto y = ask<shard_snapshot>(b, snapshot_atom_v);
    CHECK(x.step == y.step);
    CHECK(same_bits(x.params.values, y.params.values));
    CHECK(same_bits(x.ema.values, y.ema.values));
    CHECK(same_bits(x.slots.values, y.slots.values));
    CHECK(x.rejected == y.rejected);
    CHECK(x.dropped == y.dropped);
    CHECK(x.rows.keys.keys == y.rows.keys.keys);
    CHECK(same_bits(x.rows.values.values, y.rows.values.values));
    CHECK(same_bits(x.rows.accumulators.values, y.rows.accumulators.values));
  }
};

}  // namespace

TEST_CASE_FIXTURE(replica_fixture, "a primary holds a push's reply until its backup acked it") {
  auto primary = initialized_shard(config(train_mode::async), random_floats(9, 1));
  auto acks = std::make_shared<promises>();
  auto backup = stalled_backup(acks);
  pair_up(caf::actor_cast<caf::actor>(primary), backup);
  auto reply = request<std::int64_t>(primary, push_atom_v, dense_push(0, 1, random_floats(9, 2)));
  CHECK_FALSE(reply->has_value());
  REQUIRE(acks->size() == 1);
  caf::anon_send(backup, done_atom_v);
  run();
  REQUIRE(reply->has_value());
  CHECK(**reply == 1);
  stop(primary);
  caf::anon_send_exit(backup, caf::exit_reason::kill);
  run();
}

TEST_CASE_FIXTURE(replica_fixture, "a held reply goes out when the backup it waits for goes down") {
  auto primary = initialized_shard(config(train_mode::async), random_floats(9, 1));
  auto acks = std::make_shared<promises>();
  auto backup = stalled_backup(acks);
  pair_up(caf::actor_cast<caf::actor>(primary), backup);
  auto reply = request<std::int64_t>(primary, push_atom_v, dense_push(0, 1, random_floats(9, 2)));
  CHECK_FALSE(reply->has_value());
  caf::anon_send_exit(backup, caf::exit_reason::kill);
  run();
  REQUIRE(reply->has_value());
  CHECK(**reply == 1);
  // With no backup left, replies go out at once.
  auto next = request<std::int64_t>(primary, push_atom_v, dense_push(1, 1, random_floats(9, 3)));
  REQUIRE(next->has_value());
  CHECK(**next == 2);
  CHECK(acks->size() == 1);
  acks->clear();
  stop(primary);
}

TEST_CASE_FIXTURE(replica_fixture,
                  "an async backup stands bit for bit where its primary stands, refusals too") {
  const auto start = random_floats(301, 1);
  auto primary = initialized_shard(config(train_mode::async), start);
  auto backup = initialized_shard(config(train_mode::async), start);
  pair_up(primary, backup);
  for (unsigned i = 0; i < 12; ++i) {
    const auto step = static_cast<std::int64_t>(i / 2);  // stale stamps too
    CHECK(push_verdict(primary, dense_push(step, 1 + i % 2, random_floats(301, 10 + i)))
              .rfind("accepted", 0) == 0);
  }
  auto bad = random_floats(301, 40);
  bad[7] = std::numeric_limits<float>::quiet_NaN();
  CHECK(push_verdict(primary, dense_push(12, 1, bad)).rfind("not_finite", 0) == 0);
  CHECK(push_verdict(primary, dense_push(12, 1, random_floats(5, 41))).rfind("shape_mismatch", 0) ==
        0);
  check_same(primary, backup);
  CHECK(ask<shard_snapshot>(backup, snapshot_atom_v).step == 12);
  CHECK(ask<shard_snapshot>(backup, snapshot_atom_v).rejected == 2);
  stop(primary);
  stop(backup);
}

TEST_CASE_FIXTURE(replica_fixture,
                  "a sync backup completes the same rounds, sizes set by the chief included") {
  const auto start = random_floats(64, 1);
  auto primary = initialized_shard(config(train_mode::sync, 2), start);
  auto backup = initialized_shard(config(train_mode::sync, 2), start);
  pair_up(primary, backup);
  push_verdict(primary, dense_push(0, 1, random_floats(64, 2)));
  push_verdict(primary, dense_push(0, 2, random_floats(64, 3)));
  push_verdict(primary, dense_push(0, 1, random_floats(64, 4)));  // stale: dropped
  (*chief)->send(primary, required_atom_v, std::uint64_t{1});
  run();
  push_verdict(primary, dense_push(1, 2, random_floats(64, 5)));
  check_same(primary, backup);
  CHECK(ask<shard_snapshot>(backup, snapshot_atom_v).step == 2);
  CHECK(ask<shard_snapshot>(backup, snapshot_atom_v).dropped == 1);
  stop(primary);
  stop(backup);
}

TEST_CASE_FIXTURE(replica_fixture, "a backup holds the primary's rows bit for bit") {
  auto primary = rows_shard(1000);
  auto backup = rows_shard(1000);
  pair_up(primary, backup);
  std::mt19937 rng(7);
  for (int i = 0; i < 20; ++i) {
    std::vector<std::uint64_t> keys{static_cast<std::uint64_t>(rng() % 50),
                                    50 + static_cast<std::uint64_t>(rng() % 50)};
    ask<pull_reply>(primary, pull_atom_v, row_pull{0, 1, key_list{keys}});
    push_msg m{i, 1, shared_tensor{random_floats(1, 100 + i)}, key_list{keys},
               tensor{random_floats(2, 200 + i)}};
    CHECK(push_verdict(primary, m).rfind("accepted", 0) == 0);
  }
  check_same(primary, backup);
  CHECK(ask<shard_snapshot>(backup, snapshot_atom_v).rows.keys.size() > 10);
  stop(primary);
  stop(backup);
}

TEST_CASE_FIXTURE(replica_fixture, "a promoted backup takes pushes where its primary left off") {
  const auto start = random_floats(33, 1);
  auto primary = initialized_shard(config(train_mode::async), start);
  auto backup = initialized_shard(config(train_mode::async), start);
  pair_up(primary, backup);
  for (std::int64_t s = 0; s < 5; ++s) push_verdict(primary, dense_push(s, 1, random_floats(33, 9)));
  caf::anon_send_exit(primary, caf::exit_reason::kill);  // lost; a stop would end its backups too
  run();
  (*chief)->send(backup, replica_atom_v, replica_set{});
  run();
  CHECK(push_verdict(backup, dense_push(5, 1, random_floats(33, 9))) == "accepted at 6");
  stop(backup);
}

TEST_CASE_FIXTURE(replica_fixture, "a backup takes updates only from its primary") {
  const auto start = random_floats(8, 1);
  auto primary = initialized_shard(config(train_mode::async), start);
  auto backup = initialized_shard(config(train_mode::async), start);
  pair_up(primary, backup);
  replica_update forged;
  forged.pushes.push_back(dense_push(0, 1, random_floats(8, 2)));
  forged.steps.push_back(static_cast<std::uint8_t>(replica_step::taken_push));
  auto reply = request<std::int64_t>(backup, replica_atom_v, forged);
  CHECK_FALSE(reply->has_value());
  CHECK(ask<shard_snapshot>(backup, snapshot_atom_v).step == 0);
  stop(primary);
  stop(backup);
}

}  // namespace test_shard_replicas
