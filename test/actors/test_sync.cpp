#include <doctest/doctest.h>

#include <cstring>
#include <limits>
#include <memory>
#include <optional>

#include "actors/parameter_shard.hpp"
#include "actors/sync_coordinator.hpp"
#include "model/sync_rule.hpp"
#include "sync_shard_fixture.hpp"
#include "model/update.hpp"

namespace test_sync {

using namespace downpour;

TEST_CASE("a gradient stamped before the current step is stale, one from the future is refused") {
  CHECK(judge_stamp(4, 5) == stamp_verdict::stale);
  CHECK(judge_stamp(5, 5) == stamp_verdict::fresh);
  CHECK(judge_stamp(6, 5) == stamp_verdict::future);
}

TEST_CASE("a round needs replicas_to_aggregate gradients, fewer only when workers died") {
  CHECK(required_gradients(2, 2, 2) == 2);
  CHECK(required_gradients(2, 2, 1) == 1);
  CHECK(required_gradients(2, 3, 3) == 2);  // one backup worker
  CHECK(required_gradients(2, 3, 2) == 2);  // a dead backup changes nothing
  CHECK(required_gradients(4, 2, 2) == 4);  // two gradients per worker per step
  CHECK(required_gradients(4, 2, 1) == 2);
  CHECK(required_gradients(2, 2, 0) == 1);  // never zero
  CHECK(gradients_per_worker(4, 2) == 2);
  CHECK(gradients_per_worker(2, 3) == 1);
}

TEST_CASE("under ssp no worker starts more than staleness steps past the slowest live one") {
  std::map<std::uint32_t, std::int64_t> clocks{{0, 5}, {1, 3}};
  CHECK(may_advance(5, clocks, 2));
  CHECK(!may_advance(6, clocks, 2));
  CHECK(!may_advance(4, clocks, 0));
  CHECK(may_advance(3, clocks, 0));
  CHECK(may_advance(100, {}, 0));
}

using sync_fixture = downpour::testing::sync_shard_fixture;

TEST_CASE_FIXTURE(sync_fixture, "exactly one global step per aggregation, applying the mean") {
  auto shard = sync_shard(2, {1.0f, 2.0f});
  push(shard, 0, 0, {0.5f, -1.0f});
  CHECK(snapshot(shard).step == 0);  // one of two gradients: no step yet
  push(shard, 0, 1, {1.5f, 3.0f});
  auto s = snapshot(shard);
  CHECK(s.step == 1);
  // The mean (1.0, 1.0) at lr 0.01, not the sum (2.0, 2.0).
  std::vector<float> expected = {1.0f, 2.0f}, sum = {2.0f, 2.0f};
  mean_sgd_into(expected.data(), expected.data(), sum.data(), 2, 0.01f, 2);
  CHECK(to_vector(s.params.values) == expected);
  CHECK(s.params.values[0] == doctest::Approx(0.99));
  stop(shard);
}

TEST_CASE_FIXTURE(sync_fixture, "a stale gradient is dropped and counted, never applied") {
  auto shard = sync_shard(1, {1.0f});
  push(shard, 0, 0, {1.0f});
  auto after_one = snapshot(shard);
  REQUIRE(after_one.step == 1);
  push(shard, 0, 1, {100.0f});  // computed at step 0, arrives at step 1
  auto s = snapshot(shard);
  CHECK(s.step == 1);
  CHECK(s.dropped == 1);
  CHECK(s.params.values == after_one.params.values);
  stop(shard);
}

TEST_CASE_FIXTURE(sync_fixture,
                  "with a backup worker the first gradients win and the last is dropped") {
  auto shard = sync_shard(2, {0.0f});
  push(shard, 0, 2, {1.0f});
  push(shard, 0, 0, {3.0f});
  push(shard, 0, 1, {50.0f});  // the backup: too late for step 0
  auto s = snapshot(shard);
  CHECK(s.step == 1);
  CHECK(s.dropped == 1);
  CHECK(s.params.values[0] == doctest::Approx(-0.02));  // mean 2.0 at lr 0.01
  stop(shard);
}

TEST_CASE_FIXTURE(sync_fixture, "a pull for the next step waits for the round without polling") {
  auto shard = sync_shard(2, {0.0f});
  auto reply = request<pull_reply>(shard, pull_atom_v, std::int64_t{1});
  CHECK(!reply->has_value());
  push(shard, 0, 0, {1.0f});
  CHECK(!reply->has_value());
  push(shard, 0, 1, {1.0f});
  REQUIRE(reply->has_value());
  CHECK((*reply)->step == 1);
  stop(shard);
}

TEST_CASE_FIXTURE(sync_fixture,
                  "a dead worker lowers the round size and the pending round completes") {
  auto shard = sync_shard(2, {0.0f});
  coordinator_config cc;
  cc.mode = train_mode::sync;
  cc.workers = 2;
  cc.replicas_to_aggregate = 2;
  cc.shards = {shard};
  auto coordinator = spawn_sync_coordinator(*sys, cc);
  auto fake_worker = [=](caf::event_based_actor* self, std::uint32_t index) -> caf::behavior {
    self->send(coordinator, join_atom_v, index);
    return {[](int) {}};
  };
  auto w0 = sys->spawn(fake_worker, 0u);
  auto w1 = sys->spawn(fake_worker, 1u);
  sched->run();
  push(shard, 0, 0, {1.0f});
  CHECK(snapshot(shard).step == 0);
  caf::anon_send_exit(w1, caf::exit_reason::kill);  // dies holding its share of the round
  sched->run();
  CHECK(snapshot(shard).step == 1);
  // It comes back: rounds need both gradients again.
  auto w1b = sys->spawn(fake_worker, 1u);
  sched->run();
  push(shard, 1, 0, {1.0f});
  CHECK(snapshot(shard).step == 1);
  push(shard, 1, 1, {1.0f});
  CHECK(snapshot(shard).step == 2);
  for (auto a : {caf::actor_cast<caf::actor>(coordinator), w0, w1b})
    (*chief)->send_exit(a, caf::exit_reason::user_shutdown);
  stop(shard);
}

TEST_CASE_FIXTURE(
    sync_fixture,
    "ssp holds a fast worker at the bound and lets it go when the slow one advances") {
  coordinator_config cc;
  cc.mode = train_mode::ssp;
  cc.workers = 2;
  cc.staleness = 1;
  auto coordinator = spawn_sync_coordinator(*sys, cc);
  auto slots = std::make_shared<std::vector<std::int64_t>>();
  auto slow = sys->spawn([=](caf::event_based_actor* self) -> caf::behavior {
    self->send(coordinator, join_atom_v, 1u);
    return {[=](std::int64_t c) {
      self->request(coordinator, caf::infinite, clock_atom_v, 1u, c).then([](std::int64_t) {});
    }};
  });
  sched->run();  // worker 1 has joined at clock 0
  // Worker 0 runs ahead: it asks to start steps 0, 1, 2 while worker 1 sits at 0.
  auto fast = sys->spawn([=](caf::event_based_actor* self) -> caf::behavior {
    self->send(coordinator, join_atom_v, 0u);
    for (std::int64_t c = 0; c < 3; ++c)
      self->request(coordinator, caf::infinite, clock_atom_v, 0u, c)
          .then([=](std::int64_t granted) { slots->push_back(granted); });
    return {[](int) {}};
  });
  sched->run();
  CHECK(*slots == std::vector<std::int64_t>{0, 1});  // 2 would be 2 ahead of worker 1
  caf::anon_send(slow, std::int64_t{1});             // worker 1 finishes a step
  sched->run();
  CHECK(*slots == std::vector<std::int64_t>{0, 1, 2});
  for (auto a : {caf::actor_cast<caf::actor>(coordinator), fast, slow})
    (*chief)->send_exit(a, caf::exit_reason::user_shutdown);
  sched->run();
}

TEST_CASE_FIXTURE(sync_fixture, "hostile pushes are rejected and counted, never applied") {
  auto shard = sync_shard(1, {1.0f, 2.0f});
  push(shard, 0, 7, {1.0f});                                           // wrong length
  push(shard, 5, 7, {1.0f, 1.0f});                                     // stamp from the future
  push(shard, 0, 7, {std::numeric_limits<float>::quiet_NaN(), 0.0f});  // NaN
  push(shard, 0, 7, {std::numeric_limits<float>::infinity(), 0.0f});   // inf
  auto s = snapshot(shard);
  CHECK(s.step == 0);
  CHECK(s.rejected == 4);
  CHECK(to_vector(s.params.values) == std::vector<float>{1.0f, 2.0f});
  push(shard, 0, 1, {1.0f, 1.0f});  // an honest push still works
  CHECK(snapshot(shard).step == 1);
  stop(shard);
}

TEST_CASE_FIXTURE(sync_fixture, "an async shard rejects a NaN gradient but applies the next one") {
  shard_config c;
  c.mode = train_mode::async;
  c.last_step = 10;
  auto shard = initialized_shard(c, {1.0f, 1.0f});
  push(shard, 0, 3, {std::numeric_limits<float>::quiet_NaN(), 1.0f});
  CHECK(snapshot(shard).step == 0);
  push(shard, 0, 3, {1.0f, 1.0f});
  auto s = snapshot(shard);
  CHECK(s.step == 1);
  CHECK(s.rejected == 1);
  CHECK(s.params.values[0] == doctest::Approx(0.99));
  stop(shard);
}

TEST_CASE_FIXTURE(sync_fixture, "under ssp a dead slow worker no longer holds the fast one back") {
  coordinator_config cc;
  cc.mode = train_mode::ssp;
  cc.workers = 2;
  cc.staleness = 0;
  auto coordinator = spawn_sync_coordinator(*sys, cc);
  auto slow = sys->spawn([=](caf::event_based_actor* self) -> caf::behavior {
    self->send(coordinator, join_atom_v, 1u);
    return {[](int) {}};
  });
  sched->run();
  auto granted = std::make_shared<std::vector<std::int64_t>>();
  auto fast = sys->spawn([=](caf::event_based_actor* self) -> caf::behavior {
    self->send(coordinator, join_atom_v, 0u);
    for (std::int64_t c = 0; c < 2; ++c)
      self->request(coordinator, caf::infinite, clock_atom_v, 0u, c).then([=](std::int64_t g) {
        granted->push_back(g);
      });
    return {[](int) {}};
  });
  sched->run();
  CHECK(*granted == std::vector<std::int64_t>{0});  // lock-step: step 1 waits for worker 1
  caf::anon_send_exit(slow, caf::exit_reason::kill);
  sched->run();
  CHECK(*granted == std::vector<std::int64_t>{0, 1});
  for (auto a : {caf::actor_cast<caf::actor>(coordinator), fast})
    (*chief)->send_exit(a, caf::exit_reason::user_shutdown);
  sched->run();
}

TEST_CASE_FIXTURE(sync_fixture,
                  "a snapshot of a passed step fails with step_passed, a wait cut off by a restore "
                  "with restored") {
  auto shard = sync_shard(1, {0.0f});
  push(shard, 0, 0, {1.0f});
  auto failed_with = [](std::shared_ptr<std::optional<errc>> slot) {
    return [slot](caf::error& err) { *slot = static_cast<errc>(err.code()); };
  };
  auto passed = std::make_shared<std::optional<errc>>();
  auto waiting = std::make_shared<std::optional<errc>>();
  sys->spawn([=](caf::event_based_actor* self) {
    self->request(shard, caf::infinite, snapshot_atom_v, std::int64_t{0})
        .then([](shard_snapshot&) {}, failed_with(passed));
    self->request(shard, caf::infinite, await_atom_v, std::int64_t{5})
        .then([](std::int64_t) {}, failed_with(waiting));
  });
  sched->run();
  CHECK(*passed == errc::step_passed);
  CHECK(!waiting->has_value());
  shard_init init;
  init.ranges = {0, 1};
  init.params.values = to_floats(std::vector<float>{0.0f});
  init.ema.values = to_floats(std::vector<float>{0.0f});
  (*chief)->send(shard, restore_atom_v, std::move(init));
  sched->run();
  CHECK(*waiting == errc::restored);
  (*chief)->send(shard, stop_atom_v);
  sched->run();
}

namespace {

// The warnings a logger wrote to its file, one message each.
std::vector<std::string> warnings_in(std::FILE* f) {
  std::string text;
  std::rewind(f);
  for (int c; (c = std::fgetc(f)) != EOF;) text += static_cast<char>(c);
  std::vector<std::string> lines;
  for (const auto& r : parse_log(text))
    if (r.level == log_level::warn) lines.push_back(r.message);
  return lines;
}

}  // namespace

TEST_CASE_FIXTURE(sync_fixture,
                  "a leave or clock sent on another worker's behalf is refused with a log line") {
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  coordinator_config cc;
  cc.mode = train_mode::ssp;
  cc.workers = 2;
  cc.staleness = 0;
  cc.log = logger{"worker:0", log_level::info, out, err};
  auto coordinator = spawn_sync_coordinator(*sys, cc);
  auto joiner = [=](caf::event_based_actor* self, std::uint32_t index) -> caf::behavior {
    self->send(coordinator, join_atom_v, index);
    return {[](int) {}};
  };
  auto w0 = sys->spawn(joiner, 0u);
  auto w1 = sys->spawn(joiner, 1u);
  sched->run();
  // Another actor speaks for worker 1: it finished; it finished a step.
  auto refused = std::make_shared<std::optional<caf::error>>();
  auto forger = sys->spawn([=](caf::event_based_actor* self) {
    self->send(coordinator, leave_atom_v, 1u);
    self->request(coordinator, caf::infinite, clock_atom_v, 1u, std::int64_t{1})
        .then([](std::int64_t) {}, [=](caf::error& e) { *refused = e; });
  });
  sched->run();
  REQUIRE(refused->has_value());
  CHECK(**refused == errc::unauthorized);
  const auto stats = ask<worker_stats>(coordinator, stats_atom_v);
  CHECK(stats.live == std::vector<std::uint32_t>{0, 1});  // worker 1 still counts
  const auto lines = warnings_in(err);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].find("refused a leave for worker 1") == 0);
  CHECK(lines[1].find("refused a clock for worker 1") == 0);
  CHECK(lines[1].find("not the actor that joined as worker 1") != std::string::npos);
  for (auto a : {caf::actor_cast<caf::actor>(coordinator), w0, w1, forger})
    (*chief)->send_exit(a, caf::exit_reason::user_shutdown);
  sched->run();
  std::fclose(out);
  std::fclose(err);
}

}  // namespace test_sync
