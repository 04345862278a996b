// The worker's phases (actors/worker.hpp draws them), one mode at a time, on
// CAF's deterministic scheduler: the shard, the supervisor and the
// coordinator are stand-ins that record what the worker sent and hold every
// answer the test wants to give by hand, so each transition is seen alone.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "actors/worker.hpp"
#include "data/idx.hpp"
#include "model/mlp.hpp"
#include "deterministic_fixture.hpp"

namespace test_worker_phases {

using namespace downpour;

namespace {

// What the stand-ins saw, and the answers they hold.
struct seen {
  std::vector<std::int64_t> pulls;   // min_step of each pull (-1: an offer)
  std::vector<std::int64_t> pushes;  // the stamp of each push
  float value = 0.5f;                // every parameter the shard answers with
  std::vector<caf::response_promise> tickets, verdicts, clocks;
  std::vector<std::int64_t> reports;  // sync: the global step of each report
  std::vector<std::uint32_t> joins, leaves, dones;
  std::vector<std::int64_t> settles;       // the shards that refused each push
  std::vector<caf::response_promise> held_pushes;  // while hold_pushes, the shard's answers
  bool hold_pushes = false;
};

std::shared_ptr<const model> tiny_model() {
  static const auto m = mlp_model_of("mlp", mlp_spec{4, {3}, 2}, 1e-4f);
  return m;
}

std::shared_ptr<const dataset> tiny_data() {
  std::vector<std::uint8_t> pixels(16);
  for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<std::uint8_t>(i * 16);
  return std::make_shared<idx_images>(2, 2, pixels, std::vector<std::uint8_t>{0, 1, 0, 1});
}

// The shard answers a pull at once: at the step asked for (sync), else at
// the number of pushes it has seen.
using answer_atom = caf::atom_constant<caf::atom("answer")>;

caf::behavior fake_shard(caf::event_based_actor* self, std::shared_ptr<seen> s) {
  auto reply = [s](std::int64_t step) {
    return pull_reply{step, shared_tensor{std::vector<float>(tiny_model()->layout().size(),
                                                             s->value)}};
  };
  return {
      [=](pull_atom, std::int64_t min_step) {
        s->pulls.push_back(min_step);
        return reply(std::max<std::int64_t>(min_step, s->pushes.size()));
      },
      [=](pull_atom, const replay_offer&) {
        s->pulls.push_back(-1);
        return reply(static_cast<std::int64_t>(s->pushes.size()));
      },
      [=](push_atom, const push_msg& m) -> caf::result<std::int64_t> {
        s->pushes.push_back(m.step);
        if (!s->hold_pushes) return static_cast<std::int64_t>(s->pushes.size());
        s->held_pushes.push_back(self->make_response_promise());
        return caf::delegated<std::int64_t>{};
      },
      [=](answer_atom, push_atom, std::size_t i, std::int64_t refuse) {
        if (refuse)
          s->held_pushes.at(i).deliver(caf::make_error(errc::unpulled_rows, "forged"));
        else
          s->held_pushes.at(i).deliver(std::int64_t{1});
      },
  };
}

// A held answer is given by the stand-in that holds it, inside its own
// handler: a promise delivered from outside an actor has no execution
// context on the test scheduler.

caf::behavior fake_supervisor(caf::event_based_actor* self, std::shared_ptr<seen> s) {
  return {
      [=](answer_atom, ticket_atom, std::size_t i, std::int64_t x) { s->tickets.at(i).deliver(x); },
      [=](answer_atom, diverged_atom, std::size_t i, std::int64_t x) {
        s->verdicts.at(i).deliver(x);
      },
      [=](ticket_atom, std::uint32_t, float) {
        s->tickets.push_back(self->make_response_promise());
        return s->tickets.back();
      },
      [=](diverged_atom, std::uint32_t, std::int64_t, float) {
        s->verdicts.push_back(self->make_response_promise());
        return s->verdicts.back();
      },
      [=](report_atom, std::uint32_t, std::int64_t step, float) { s->reports.push_back(step); },
      [=](done_atom, std::uint32_t worker) { s->dones.push_back(worker); },
      [=](settle_atom, std::uint32_t, std::int64_t refused) { s->settles.push_back(refused); },
  };
}

caf::behavior fake_coordinator(caf::event_based_actor* self, std::shared_ptr<seen> s) {
  return {
      [=](answer_atom, clock_atom, std::size_t i, std::int64_t x) { s->clocks.at(i).deliver(x); },
      [=](join_atom, std::uint32_t worker) { s->joins.push_back(worker); },
      [=](leave_atom, std::uint32_t worker) { s->leaves.push_back(worker); },
      [=](leave_atom, std::uint32_t worker, std::int64_t) { s->leaves.push_back(worker); },
      [=](clock_atom, std::uint32_t, std::int64_t) {
        s->clocks.push_back(self->make_response_promise());
        return s->clocks.back();
      },
  };
}

struct phases_fixture : downpour::testing::deterministic_fixture {
  std::shared_ptr<seen> s = std::make_shared<seen>();
  std::vector<caf::actor> fakes;

  phases_fixture() {
    fakes = {sys->spawn(fake_shard, s), sys->spawn(fake_supervisor, s),
             sys->spawn(fake_coordinator, s)};
  }

  worker_actor start(train_mode mode, bool pipeline = false, std::int64_t last_step = 100) {
    worker_config w;
    w.net = tiny_model();
    w.model_size = tiny_model()->layout().size();
    w.batch_size = 2;
    w.log_every = 1000;
    w.train = tiny_data();
    w.shards = {caf::actor_cast<shard_actor>(fakes[0])};
    w.layouts = partition(tiny_model()->layout(), 1, placement_kind::balanced);
    w.supervisor = caf::actor_cast<supervisor_actor>(fakes[1]);
    w.coordinator = caf::actor_cast<coordinator_actor>(fakes[2]);
    w.mode = mode;
    w.pipeline = pipeline;
    w.last_step = last_step;
    w.log = logger{"worker:0", log_level::error};
    auto worker = spawn_worker(*sys, std::move(w));
    (*chief)->send(worker, start_atom_v);
    sched->run();
    return worker;
  }

  void answer_ticket(std::size_t i, std::int64_t x) { answer(fakes[1], ticket_atom_v, i, x); }
  void answer_verdict(std::size_t i, std::int64_t x) { answer(fakes[1], diverged_atom_v, i, x); }
  void admit(std::size_t i) { answer(fakes[2], clock_atom_v, i, 0); }

  template <class Atom>
  void answer(const caf::actor& fake, Atom which, std::size_t i, std::int64_t x) {
    (*chief)->send(fake, answer_atom::value, which, i, x);
    sched->run();
  }

  ~phases_fixture() {
    for (auto& a : fakes) (*chief)->send_exit(a, caf::exit_reason::user_shutdown);
    sched->run();
  }

  void stop(const worker_actor& worker) {
    (*chief)->send_exit(worker, caf::exit_reason::user_shutdown);
    sched->run();
  }
};

}  // namespace

TEST_CASE_FIXTURE(phases_fixture,
                  "an async worker computes while its ticket is out and pushes once it is in") {
  auto worker = start(train_mode::async);
  CHECK(s->joins == std::vector<std::uint32_t>{0});
  CHECK(s->pulls.size() == 1);
  REQUIRE(s->tickets.size() == 1);
  CHECK(s->pushes.empty());  // holding: the gradient waits for the ticket
  answer_ticket(0, 0);
  CHECK(s->pushes == std::vector<std::int64_t>{0});
  CHECK(s->tickets.size() == 2);  // the next ticket is asked for right after the push
  CHECK(s->pulls.size() == 2);
  CHECK(s->dones.empty());
  stop(worker);
}

TEST_CASE_FIXTURE(phases_fixture, "an async worker given ticket -1 leaves without pushing") {
  start(train_mode::async);
  answer_ticket(0, -1);
  CHECK(s->pushes.empty());
  CHECK(s->dones == std::vector<std::uint32_t>{0});
  CHECK(s->leaves == std::vector<std::uint32_t>{0});
}

TEST_CASE_FIXTURE(phases_fixture,
                  "an async worker tells the supervisor how every push fared, and one given -1 "
                  "with a push unanswered waits for it and asks again before it leaves") {
  s->hold_pushes = true;
  start(train_mode::async);
  answer_ticket(0, 0);
  answer(fakes[0], push_atom_v, 0, 0);
  CHECK(s->settles == std::vector<std::int64_t>{0});
  answer_ticket(1, 1);
  REQUIRE(s->pushes.size() == 2);
  answer_ticket(2, -1);  // the push of ticket 1 is still out: it may give the ticket back
  CHECK(s->dones.empty());
  CHECK(s->tickets.size() == 3);
  answer(fakes[0], push_atom_v, 1, 1);  // refused
  CHECK(s->settles == std::vector<std::int64_t>{0, 1});
  REQUIRE(s->tickets.size() == 4);  // asks again: the returned ticket may be its own
  answer_ticket(3, 9);
  CHECK(s->pushes.size() == 3);
  answer(fakes[0], push_atom_v, 2, 0);
  answer_ticket(4, -1);
  CHECK(s->dones == std::vector<std::uint32_t>{0});
}

TEST_CASE_FIXTURE(phases_fixture,
                  "a pipelined worker pulls the next step's parameters before its push") {
  auto worker = start(train_mode::async, true);
  CHECK(s->pulls.size() == 2);  // the first pull, and the prefetch sent at the compute
  CHECK(s->pushes.empty());
  answer_ticket(0, 0);
  CHECK(s->pushes.size() == 1);
  // The prefetch was in: the next compute starts at once and prefetches again.
  CHECK(s->pulls.size() == 3);
  CHECK(s->tickets.size() == 2);
  stop(worker);
}

TEST_CASE_FIXTURE(phases_fixture,
                  "an ssp worker pulls and asks for a ticket only once its step is admitted") {
  auto worker = start(train_mode::ssp);
  REQUIRE(s->clocks.size() == 1);
  CHECK(s->pulls.empty());  // admitting
  CHECK(s->tickets.empty());
  admit(0);
  CHECK(s->pulls.size() == 1);
  REQUIRE(s->tickets.size() == 1);
  answer_ticket(0, 0);
  CHECK(s->pushes.size() == 1);
  CHECK(s->clocks.size() == 2);  // admitting the next step
  CHECK(s->pulls.size() == 1);
  CHECK(s->tickets.size() == 1);
  stop(worker);
}

TEST_CASE_FIXTURE(phases_fixture,
                  "a sync worker pulls for the next global step after each push and leaves "
                  "once the last step is pulled") {
  start(train_mode::sync, false, 2);
  CHECK(s->tickets.empty());  // no tickets in sync mode
  CHECK(s->pulls == std::vector<std::int64_t>{0, 1, 2});
  CHECK(s->pushes == std::vector<std::int64_t>{0, 1});
  CHECK(s->reports == std::vector<std::int64_t>{1, 2});
  CHECK(s->dones == std::vector<std::uint32_t>{0});
  CHECK(s->leaves == std::vector<std::uint32_t>{0});
}

TEST_CASE_FIXTURE(phases_fixture,
                  "a non-finite batch is never pushed; told to skip it the worker computes the "
                  "next batch on the same parameters") {
  s->value = std::numeric_limits<float>::quiet_NaN();
  auto worker = start(train_mode::async);
  answer_ticket(0, 0);
  REQUIRE(s->verdicts.size() == 1);  // waiting for the verdict
  CHECK(s->pushes.empty());
  answer_verdict(0, 1);
  CHECK(s->verdicts.size() == 2);  // the next batch, on the same NaN parameters
  CHECK(s->pulls.size() == 1);
  CHECK(s->pushes.empty());
  stop(worker);
}

TEST_CASE_FIXTURE(phases_fixture,
                  "a worker told to stop pushes the step it holds a ticket for, then leaves") {
  auto worker = start(train_mode::async);
  (*chief)->send(worker, stop_atom_v);
  sched->run();
  CHECK(s->dones.empty());  // still holding its gradient
  answer_ticket(0, 0);
  CHECK(s->pushes.size() == 1);
  CHECK(s->tickets.size() == 1);  // no ticket asked for after the last push
  CHECK(s->dones == std::vector<std::uint32_t>{0});
  CHECK(s->leaves == std::vector<std::uint32_t>{0});
}

TEST_CASE_FIXTURE(phases_fixture,
                  "a worker whose shard ends the job while a push is unanswered leaves at once") {
  s->hold_pushes = true;
  start(train_mode::async);
  answer_ticket(0, 0);
  REQUIRE(s->pushes.size() == 1);  // the shard holds its answer
  (*chief)->send_exit(fakes[0], caf::make_error(errc::diverged));
  sched->run();
  CHECK(s->dones == std::vector<std::uint32_t>{0});
  CHECK(s->leaves == std::vector<std::uint32_t>{0});
}

}  // namespace test_worker_phases
