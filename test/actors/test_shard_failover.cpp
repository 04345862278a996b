// A shard's part in a failover across processes (--ps-replicas 2) on CAF's
// deterministic scheduler: the fence against the lost epoch's workers, the
// step every shard is brought to, the backup a ps attaches, the copy it names.
#include <doctest/doctest.h>

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "actors/parameter_shard.hpp"
#include "deterministic_fixture.hpp"

namespace test_shard_failover {

using namespace downpour;

namespace {

using downpour::testing::random_floats;

bool same_bits(const floats& a, const floats& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

struct failover_fixture : downpour::testing::deterministic_fixture {
  shard_config config(train_mode mode, std::size_t replicas, std::size_t required = 1) {
    shard_config c;
    c.mode = mode;
    c.required = required;
    c.replicas = replicas;
    c.last_step = 1000;
    c.schedule = lr_schedule{0.05f, 0.9f, 7, false};
    return c;
  }

  // The chief's replica sets: backup takes primary's pushes.
  void pair_up(const shard_actor& primary, const shard_actor& backup) {
    (*chief)->send(primary, replica_atom_v, replica_set{{caf::actor_cast<caf::actor>(backup)}, {}});
    (*chief)->send(backup, replica_atom_v, replica_set{{}, caf::actor_cast<caf::actor>(primary)});
    run();
  }

  push_msg dense_push(std::int64_t step, std::uint32_t worker, std::vector<float> grad) {
    return push_msg{step, worker, shared_tensor{std::move(grad)}};
  }

  // One worker that pushes again and again: a fence remembers its address.
  struct pusher {
    caf::actor actor;
    std::shared_ptr<std::string> verdict;
  };

  pusher spawn_pusher(const shard_actor& shard) {
    auto verdict = std::make_shared<std::string>();
    auto a = sys->spawn([=](caf::event_based_actor* self) -> caf::behavior {
      return {[=](push_msg& m) {
        self->request(shard, caf::infinite, push_atom_v, m)
            .then([=](std::int64_t x) { *verdict = "accepted at " + std::to_string(x); },
                  [=](caf::error& err) { *verdict = to_string(static_cast<errc>(err.code())); });
      }};
    });
    return {a, verdict};
  }

  // A push sent again after a failover (a worker node's keeper).
  std::string resend(const shard_actor& shard, push_msg m) {
    auto slot = std::make_shared<std::string>("no answer");
    sys->spawn([=](caf::event_based_actor* self) {
      self->request(shard, caf::infinite, resend_atom_v, m)
          .then([=](std::int64_t x) { *slot = "at " + std::to_string(x); },
                [=](caf::error& err) { *slot = to_string(static_cast<errc>(err.code())); });
    });
    run();
    return *slot;
  }

  push_msg numbered(std::int64_t step, std::uint32_t worker, std::vector<float> grad,
                    std::uint64_t seq) {
    auto m = dense_push(step, worker, std::move(grad));
    m.seq = seq;
    return m;
  }

  std::string push_from(const pusher& p, push_msg m) {
    p.verdict->assign("no answer");
    caf::anon_send(p.actor, std::move(m));
    run();
    return *p.verdict;
  }

  std::string error_of(const shard_actor& shard, std::int64_t step) {
    auto slot = std::make_shared<std::string>("no answer");
    sys->spawn([=](caf::event_based_actor* self) {
      self->request(shard, caf::infinite, failover_atom_v, failover_plan{step, {}})
          .then([=](std::int64_t x) { *slot = "at " + std::to_string(x); },
                [=](caf::error& err) { *slot = to_string(static_cast<errc>(err.code())); });
    });
    run();
    return *slot;
  }
};

}  // namespace

TEST_CASE_FIXTURE(failover_fixture, "after a failover fence a shard refuses the pushes of every "
                                    "worker that pushed before it and takes a new worker's") {
  auto shard = initialized_shard(config(train_mode::async, 2), random_floats(9, 1));
  auto old = spawn_pusher(shard);
  CHECK(push_from(old, dense_push(0, 1, random_floats(9, 2))) == "accepted at 1");
  CHECK(ask<fence_report>(shard, failover_atom_v).step == 1);
  CHECK(push_from(old, dense_push(1, 1, random_floats(9, 3))) == "fenced");
  CHECK(push_verdict(shard, dense_push(1, 1, random_floats(9, 3))) == "accepted at 2");
  stop(shard);
}

TEST_CASE_FIXTURE(failover_fixture, "a shard of one copy keeps no pushers: a fence refuses nobody") {
  auto shard = initialized_shard(config(train_mode::async, 1), random_floats(9, 1));
  auto old = spawn_pusher(shard);
  CHECK(push_from(old, dense_push(0, 1, random_floats(9, 2))) == "accepted at 1");
  CHECK(ask<fence_report>(shard, failover_atom_v).step == 1);
  CHECK(push_from(old, dense_push(1, 1, random_floats(9, 3))) == "accepted at 2");
  stop(shard);
}

TEST_CASE_FIXTURE(failover_fixture, "a failover step moves a lagging shard's step on with its "
                                    "parameters as they were, never back, and its backup follows") {
  const auto start = random_floats(17, 1);
  auto primary = initialized_shard(config(train_mode::async, 2), start);
  auto backup = initialized_shard(config(train_mode::async, 2), start);
  pair_up(primary, backup);
  CHECK(push_verdict(primary, dense_push(0, 1, random_floats(17, 2))) == "accepted at 1");
  const auto before = ask<shard_snapshot>(primary, snapshot_atom_v);
  CHECK(ask<fence_report>(primary, failover_atom_v).step == 1);
  CHECK(error_of(primary, 4) == "at 4");
  const auto after = ask<shard_snapshot>(primary, snapshot_atom_v);
  CHECK(after.step == 4);
  CHECK(same_bits(after.params.values, before.params.values));
  CHECK(ask<shard_snapshot>(backup, snapshot_atom_v).step == 4);
  CHECK(same_bits(ask<shard_snapshot>(backup, snapshot_atom_v).params.values,
                  before.params.values));
  CHECK(error_of(primary, 3) == "shape_mismatch");
  CHECK(ask<shard_snapshot>(primary, snapshot_atom_v).step == 4);
  stop(primary);
  stop(backup);
}

TEST_CASE_FIXTURE(failover_fixture, "a sync fence drops the round in progress: the next round is "
                                    "the mean of the new workers' gradients alone") {
  const auto start = random_floats(11, 1);
  auto fenced = initialized_shard(config(train_mode::sync, 2, 2), start);
  auto fresh = initialized_shard(config(train_mode::sync, 2, 2), start);
  CHECK(push_verdict(fenced, dense_push(0, 1, random_floats(11, 7))) == "accepted at 0");
  CHECK(ask<fence_report>(fenced, failover_atom_v).step == 0);
  for (const auto& shard : {fenced, fresh}) {
    push_verdict(shard, dense_push(0, 1, random_floats(11, 2)));
    push_verdict(shard, dense_push(0, 2, random_floats(11, 3)));
  }
  const auto a = ask<shard_snapshot>(fenced, snapshot_atom_v);
  const auto b = ask<shard_snapshot>(fresh, snapshot_atom_v);
  CHECK(a.step == 1);
  CHECK(b.step == 1);
  CHECK(same_bits(a.params.values, b.params.values));
  stop(fenced);
  stop(fresh);
}

TEST_CASE_FIXTURE(failover_fixture, "a backup joins a primary only for a node that said hello as "
                                    "a replica, and a ps names the copy it keeps, no other") {
  const auto start = random_floats(5, 1);
  auto primary = initialized_shard(config(train_mode::async, 2), start);
  auto backup = spawn_parameter_shard(*sys, config(train_mode::async, 2));
  const auto as_actor = caf::actor_cast<caf::actor>(backup);
  CHECK_FALSE(request<std::int64_t>(primary, replica_atom_v, as_actor)->has_value());
  CHECK(ask<std::int64_t>(primary, hello_atom_v, hello_msg{"", 0, hello_msg::from_replica, {}}) ==
        0);
  (*chief)->send(backup, replica_atom_v, replica_set{{}, caf::actor_cast<caf::actor>(primary)});
  CHECK(ask<std::int64_t>(primary, replica_atom_v, as_actor) == 0);
  CHECK(ask<shard_snapshot>(backup, snapshot_atom_v).step == 0);  // took the primary's state

  auto cfg = config(train_mode::async, 2);
  cfg.index = 1;
  cfg.hosted.emplace(0, as_actor);
  auto host = spawn_parameter_shard(*sys, cfg);
  CHECK(ask<caf::actor>(host, replica_atom_v, std::uint32_t{0}) == as_actor);
  CHECK_FALSE(request<caf::actor>(host, replica_atom_v, std::uint32_t{1})->has_value());
  for (const auto& s : {primary, backup, host}) stop(s);
}

TEST_CASE_FIXTURE(failover_fixture, "a primary's stop ends its backups, and the primary only "
                                    "after them: the job is over for every copy") {
  const auto start = random_floats(5, 1);
  auto primary = initialized_shard(config(train_mode::async, 2), start);
  auto backup = initialized_shard(config(train_mode::async, 2), start);
  pair_up(primary, backup);
  (*chief)->monitor(backup);
  (*chief)->monitor(primary);
  stop(primary);
  // The backup first: the primary waits for it, so its node cannot exit first.
  std::vector<caf::actor_addr> ended;
  for (int i = 0; i < 2; ++i)
    (*chief)->receive([&](caf::down_msg& dm) { ended.push_back(dm.source); },
                      caf::after(std::chrono::seconds(0)) >> [] {});
  REQUIRE(ended.size() == 2);
  CHECK(ended[0] == backup.address());
  CHECK(ended[1] == primary.address());
}

TEST_CASE_FIXTURE(failover_fixture, "a fence reports the seqs of the pushes the shard took last, "
                                    "each with the step it was taken at") {
  auto shard = initialized_shard(config(train_mode::async, 2), random_floats(9, 1));
  CHECK(push_verdict(shard, numbered(0, 1, random_floats(9, 2), 41)) == "accepted at 1");
  CHECK(push_verdict(shard, dense_push(1, 1, random_floats(9, 3))) == "accepted at 2");
  CHECK(push_verdict(shard, numbered(2, 2, random_floats(9, 4), 42)) == "accepted at 3");
  const auto report = ask<fence_report>(shard, failover_atom_v);
  CHECK(report.step == 3);
  REQUIRE(report.recent.size() == 2);
  CHECK(report.recent[0].seq == 41);
  CHECK(report.recent[0].step == 0);
  CHECK(report.recent[1].seq == 42);
  CHECK(report.recent[1].step == 2);
  stop(shard);
}

TEST_CASE_FIXTURE(failover_fixture, "a push sent again that the shard took already is answered "
                                    "with its step and changes nothing") {
  auto shard = initialized_shard(config(train_mode::async, 2), random_floats(9, 1));
  const auto grad = random_floats(9, 2);
  CHECK(push_verdict(shard, numbered(0, 1, grad, 7)) == "accepted at 1");
  const auto before = ask<shard_snapshot>(shard, snapshot_atom_v);
  CHECK(resend(shard, numbered(0, 1, grad, 7)) == "at 1");
  const auto after = ask<shard_snapshot>(shard, snapshot_atom_v);
  CHECK(after.step == 1);
  CHECK(same_bits(after.params.values, before.params.values));
  stop(shard);
}

TEST_CASE_FIXTURE(failover_fixture, "a push a shard owes after a failover is taken when sent "
                                    "again, once, with the schedule of the step it was taken at "
                                    "elsewhere, and the step stays; its backup takes it too") {
  // Two shards of one job: `whole` took pushes 1 and 2; `lagging` (a
  // promoted backup) missed push 2, which the plan makes it owe.
  const auto start = random_floats(13, 1);
  const auto g1 = random_floats(13, 2), g2 = random_floats(13, 3);
  auto whole = initialized_shard(config(train_mode::async, 2), start);
  auto lagging = initialized_shard(config(train_mode::async, 2), start);
  auto backup = initialized_shard(config(train_mode::async, 2), start);
  pair_up(lagging, backup);
  for (const auto& [m, to] : {std::pair{numbered(0, 1, g1, 1), whole},
                              std::pair{numbered(1, 1, g2, 2), whole},
                              std::pair{numbered(0, 1, g1, 1), lagging}})
    push_verdict(to, m);
  const auto plans = plan_failover({ask<fence_report>(whole, failover_atom_v),
                                    ask<fence_report>(lagging, failover_atom_v)});
  REQUIRE(plans.size() == 2);
  CHECK(plans[0].owed.empty());
  REQUIRE(plans[1].owed.size() == 1);
  CHECK(plans[1].owed[0].seq == 2);
  CHECK(plans[1].owed[0].step == 1);
  CHECK(ask<std::int64_t>(lagging, failover_atom_v, plans[1]) == 2);
  CHECK(resend(lagging, numbered(1, 1, g2, 2)) == "at 2");
  CHECK(resend(lagging, numbered(1, 1, g2, 2)) == "at 2");  // once only
  const auto a = ask<shard_snapshot>(whole, snapshot_atom_v);
  const auto b = ask<shard_snapshot>(lagging, snapshot_atom_v);
  const auto c = ask<shard_snapshot>(backup, snapshot_atom_v);
  CHECK(b.step == 2);
  CHECK(c.step == 2);
  CHECK(same_bits(a.params.values, b.params.values));
  CHECK(same_bits(a.params.values, c.params.values));
  CHECK(same_bits(a.ema.values, b.ema.values));
  for (const auto& s : {whole, lagging, backup}) stop(s);
}

TEST_CASE_FIXTURE(failover_fixture, "a push sent again that no shard took before the failover is "
                                    "refused as fenced: its step is trained again") {
  auto shard = initialized_shard(config(train_mode::async, 2), random_floats(9, 1));
  CHECK(push_verdict(shard, numbered(0, 1, random_floats(9, 2), 5)) == "accepted at 1");
  CHECK(resend(shard, numbered(1, 1, random_floats(9, 3), 6)) == "fenced");
  CHECK(ask<shard_snapshot>(shard, snapshot_atom_v).step == 1);
  stop(shard);
}

TEST_CASE_FIXTURE(failover_fixture, "a sync round another shard completed is completed here "
                                    "when its missing push is sent again, with the gradient the "
                                    "fence found, and the step stays") {
  const auto start = random_floats(11, 1);
  const auto g1 = random_floats(11, 2), g2 = random_floats(11, 3);
  auto whole = initialized_shard(config(train_mode::sync, 2, 2), start);
  auto lagging = initialized_shard(config(train_mode::sync, 2, 2), start);
  push_verdict(whole, numbered(0, 1, g1, 1));
  push_verdict(whole, numbered(0, 2, g2, 2));
  push_verdict(lagging, numbered(0, 1, g1, 1));
  const auto plans = plan_failover({ask<fence_report>(whole, failover_atom_v),
                                    ask<fence_report>(lagging, failover_atom_v)});
  REQUIRE(plans[1].owed.size() == 1);
  CHECK(plans[1].owed[0].seq == 2);
  CHECK(ask<std::int64_t>(whole, failover_atom_v, plans[0]) == 1);
  CHECK(ask<std::int64_t>(lagging, failover_atom_v, plans[1]) == 1);
  CHECK(resend(lagging, numbered(0, 1, g1, 1)) == "at 1");  // in the round already
  CHECK(resend(lagging, numbered(0, 2, g2, 2)) == "at 1");
  const auto a = ask<shard_snapshot>(whole, snapshot_atom_v);
  const auto b = ask<shard_snapshot>(lagging, snapshot_atom_v);
  CHECK(b.step == 1);
  CHECK(same_bits(a.params.values, b.params.values));
  CHECK(same_bits(a.ema.values, b.ema.values));
  for (const auto& s : {whole, lagging}) stop(s);
}

}  // namespace test_shard_failover
