// One actor system on CAF's deterministic test scheduler (the idea of CAF
// 0.17's examples/testing/ping_pong.cpp): nothing runs until the test calls
// run(), so the order of messages is the test's. The fixture of the actor
// tests of the parameter shard and the sync coordinator.
#pragma once

#include <doctest/doctest.h>

#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "actors/parameter_shard.hpp"
#include "caf/scheduler/test_coordinator.hpp"

namespace downpour::testing {

// n standard-normal floats, the same for the same seed.
inline std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

struct deterministic_fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::scheduler::test_coordinator* sched = nullptr;
  // The sender of control messages: a shard obeys only its own node (or its
  // chief), and anonymous messages could come from anywhere.
  std::unique_ptr<caf::scoped_actor> chief;

  deterministic_fixture() {
    cfg.set("scheduler.policy", caf::atom("testing"));
    cfg.set("logger.console", caf::atom("none"));
    cfg.add_message_types<caf::id_block::downpour>();
    sys = std::make_unique<caf::actor_system>(cfg);
    sched = &dynamic_cast<caf::scheduler::test_coordinator&>(sys->scheduler());
    chief = std::make_unique<caf::scoped_actor>(*sys);
  }

  ~deterministic_fixture() {
    chief.reset();
    sys->registry().await_running_count_equal(0);
  }

  void run() { sched->run(); }

  // A shard of c holding params (and the same EMA), initialized by the chief.
  shard_actor initialized_shard(const shard_config& c, const std::vector<float>& params) {
    auto shard = spawn_parameter_shard(*sys, c);
    shard_init init;
    init.ranges = {0, params.size()};
    init.params.values = to_floats(params);
    init.ema.values = to_floats(params);
    (*chief)->send(shard, init_atom_v, std::move(init));
    run();
    return shard;
  }

  // An async shard of all `rows` rows of a 1-column variable (zeros) and one
  // dense float, plain SGD at lr 0.5, initialized by the chief.
  shard_actor rows_shard(std::uint64_t rows) {
    sparse_table_spec spec;
    spec.rows = rows;
    spec.dim = 1;
    shard_config c;
    c.mode = train_mode::async;
    c.last_step = 1000;
    c.schedule = lr_schedule{0.5f, 1.0f, 1000, false};
    c.rows = row_tables_spec{{spec}};
    auto shard = spawn_parameter_shard(*sys, c);
    shard_init init;
    init.ranges = {0, 1};
    init.params.values = floats{0.0f};
    init.ema.values = floats{0.0f};
    init.rows.first = 0;
    init.rows.last = rows;
    (*chief)->send(shard, init_atom_v, std::move(init));
    run();
    return shard;
  }

  // Sends a request through a helper actor and runs the scheduler; the reply
  // lands in the returned slot when it comes (now, or in a later run()).
  template <class T, class Handle, class... Ts>
  std::shared_ptr<std::optional<T>> request(const Handle& h, Ts... xs) {
    auto slot = std::make_shared<std::optional<T>>();
    sys->spawn([=](caf::event_based_actor* self) {
      self->request(h, caf::infinite, xs...).then([=](T& x) { *slot = std::move(x); });
    });
    run();
    return slot;
  }

  // The reply to a request that h answers at once.
  template <class T, class Handle, class... Ts>
  T ask(const Handle& h, Ts... xs) {
    auto slot = request<T>(h, xs...);
    REQUIRE(slot->has_value());
    return std::move(**slot);
  }

  // What a shard answers a push: "accepted at STEP", or "ERRC: message".
  std::string push_verdict(const shard_actor& shard, const push_msg& m) {
    auto slot = std::make_shared<std::string>("no answer");
    sys->spawn([=](caf::event_based_actor* self) {
      self->request(shard, caf::infinite, push_atom_v, m)
          .then([=](std::int64_t x) { *slot = "accepted at " + std::to_string(x); },
                [=](caf::error& err) {
                  *slot =
                      to_string(static_cast<errc>(err.code())) + ": " + self->system().render(err);
                });
    });
    run();
    return *slot;
  }

  void stop(const shard_actor& shard) {
    (*chief)->send(shard, stop_atom_v);
    run();
  }
};

}  // namespace downpour::testing
