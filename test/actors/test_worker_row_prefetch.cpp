// A worker of a model with a row variable (logreg), pipelined, on CAF's
// deterministic scheduler: the stand-in shard records every pull, push and
// push_pull in the order it got them, so the tests see the next batch's rows
// pulled before the gradient of the batch in hand is pushed in ssp, with the
// push in one message in async, and after the push in sync.
#include <doctest/doctest.h>

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "actors/worker.hpp"
#include "data/data_reader.hpp"
#include "model/sparse_models.hpp"
#include "deterministic_fixture.hpp"

namespace test_worker_row_prefetch {

using namespace downpour;

namespace {

using keys_t = std::vector<std::uint64_t>;

// What reached the shard, in order: "pull", "push" or "push_pull", with keys.
struct event {
  std::string kind;
  keys_t keys;       // a pull's, or a push's
  keys_t next_keys;  // a push_pull's pull
};

struct seen {
  std::vector<event> events;
  std::vector<caf::response_promise> tickets;
  std::vector<caf::response_promise> clocks;
  std::vector<std::int64_t> clock_steps;  // the step each clock asks to read for
  std::vector<caf::response_promise> verdicts;
  std::vector<std::uint32_t> dones;
  std::int64_t pushes = 0;
  int nan_pulls = 0;  // the first pulls answered with NaN rows (a bad batch)

  std::vector<std::string> kinds() const {
    std::vector<std::string> out;
    for (const auto& e : events) out.push_back(e.kind);
    return out;
  }
};

std::shared_ptr<const model> tiny_logreg() {
  static const auto m = [] {
    model_choice c;
    c.name = "logreg";
    c.sparse_rows = 64;
    return make_logreg(c, model_request{data_shape{{0}}, 2, 0.0f, c});
  }();
  return m;
}

// Eight examples of two features each; batches of two.
std::shared_ptr<const dataset> tiny_sparse_data() {
  sparse_examples x;
  for (std::uint64_t i = 0; i < 8; ++i) {
    x.keys.push_back(1 + 3 * i);
    x.keys.push_back(2 + 3 * i);
    x.values.insert(x.values.end(), {1.0f, 1.0f});
    x.close_example(static_cast<std::uint8_t>(i % 2));
  }
  return sparse_dataset(std::move(x));
}

pull_reply rows_reply(seen& s, std::size_t rows) {
  const float value = s.nan_pulls-- > 0 ? std::numeric_limits<float>::quiet_NaN() : 0.0f;
  return pull_reply{s.pushes, shared_tensor{floats(tiny_logreg()->layout().size(), 0.0f)}, false,
                    tensor{floats(rows, value)}};
}

caf::behavior fake_row_shard(caf::event_based_actor*, std::shared_ptr<seen> s) {
  return {
      [=](pull_atom, const row_pull& p) {
        s->events.push_back({"pull", p.keys.keys, {}});
        return rows_reply(*s, p.keys.size());
      },
      [=](push_atom, const push_msg& m) {
        s->events.push_back({"push", m.keys.keys, {}});
        return ++s->pushes;
      },
      [=](push_atom, const push_pull& x) {
        s->events.push_back({"push_pull", x.push.keys.keys, x.pull.keys.keys});
        ++s->pushes;
        return push_pull_reply{s->pushes, caf::error{}, rows_reply(*s, x.pull.keys.size())};
      },
  };
}

using answer_atom = caf::atom_constant<caf::atom("answer")>;

caf::behavior fake_supervisor(caf::event_based_actor* self, std::shared_ptr<seen> s) {
  return {
      [=](answer_atom, ticket_atom, std::size_t i, std::int64_t x) { s->tickets.at(i).deliver(x); },
      [=](answer_atom, diverged_atom, std::size_t i, std::int64_t x) {
        s->verdicts.at(i).deliver(x);
      },
      [=](diverged_atom, std::uint32_t, std::int64_t, float) {
        s->verdicts.push_back(self->make_response_promise());
        return s->verdicts.back();
      },
      [=](ticket_atom, std::uint32_t, float) {
        s->tickets.push_back(self->make_response_promise());
        return s->tickets.back();
      },
      [=](report_atom, std::uint32_t, std::int64_t, float) {},
      [=](done_atom, std::uint32_t worker) { s->dones.push_back(worker); },
      [=](settle_atom, std::uint32_t, std::int64_t) {},
  };
}

caf::behavior fake_coordinator(caf::event_based_actor* self, std::shared_ptr<seen> s) {
  auto held = [=](std::int64_t step) {
    s->clock_steps.push_back(step);
    s->clocks.push_back(self->make_response_promise());
    return s->clocks.back();
  };
  return {
      [=](answer_atom, clock_atom, std::size_t i, std::int64_t x) { s->clocks.at(i).deliver(x); },
      [=](join_atom, std::uint32_t) {},
      [=](leave_atom, std::uint32_t) {},
      [=](leave_atom, std::uint32_t, std::int64_t) {},
      [=](clock_atom, std::uint32_t, std::int64_t finished) { return held(finished); },
      [=](clock_atom, std::uint32_t, std::int64_t, std::int64_t step) { return held(step); },
  };
}

struct rows_fixture : downpour::testing::deterministic_fixture {
  std::shared_ptr<seen> s = std::make_shared<seen>();
  std::vector<caf::actor> fakes;

  rows_fixture() {
    fakes = {sys->spawn(fake_row_shard, s), sys->spawn(fake_supervisor, s),
             sys->spawn(fake_coordinator, s)};
  }

  ~rows_fixture() {
    for (auto& a : fakes) (*chief)->send_exit(a, caf::exit_reason::user_shutdown);
    sched->run();
  }

  worker_actor start(train_mode mode, bool pipeline, std::int64_t staleness = 3) {
    const auto layout = tiny_logreg()->layout();
    worker_config w;
    w.net = tiny_logreg();
    w.model_size = layout.size();
    w.batch_size = 2;
    w.log_every = 1000;
    w.train = tiny_sparse_data();
    w.shards = {caf::actor_cast<shard_actor>(fakes[0])};
    w.layouts = partition(layout, 1, placement_kind::balanced);
    w.row_bounds = row_boundaries(layout.rows().keys(), 1);
    w.row_keys = layout.rows();
    w.supervisor = caf::actor_cast<supervisor_actor>(fakes[1]);
    w.coordinator = caf::actor_cast<coordinator_actor>(fakes[2]);
    w.mode = mode;
    w.pipeline = pipeline;
    w.staleness = staleness;
    w.last_step = 100;
    w.log = logger{"worker:0", log_level::error};
    auto worker = spawn_worker(*sys, std::move(w));
    (*chief)->send(worker, start_atom_v);
    sched->run();
    return worker;
  }

  template <class Atom>
  void answer(const caf::actor& fake, Atom which, std::size_t i, std::int64_t x) {
    (*chief)->send(fake, answer_atom::value, which, i, x);
    sched->run();
  }
  void answer_ticket(std::size_t i, std::int64_t x) { answer(fakes[1], ticket_atom_v, i, x); }
  void admit(std::size_t i) { answer(fakes[2], clock_atom_v, i, 0); }

  void stop(const worker_actor& worker) {
    (*chief)->send_exit(worker, caf::exit_reason::user_shutdown);
    sched->run();
  }
};

using kinds = std::vector<std::string>;

}  // namespace

TEST_CASE_FIXTURE(rows_fixture,
                  "an async worker, pipelined or not, pushes and pulls the next batch's rows in "
                  "one message after the compute") {
  for (const bool pipeline : {true, false}) {
    CAPTURE(pipeline);
    s->events.clear();
    auto worker = start(train_mode::async, pipeline);
    CHECK(s->kinds() == kinds{"pull"});
    answer_ticket(s->tickets.size() - 1, 0);
    REQUIRE(s->kinds() == kinds{"pull", "push_pull"});
    CHECK(s->events[1].keys == s->events[0].keys);
    CHECK(s->events[1].next_keys != s->events[0].keys);
    stop(worker);
  }
}

TEST_CASE_FIXTURE(rows_fixture,
                  "a pipelined ssp worker pulls the next batch's rows once the coordinator "
                  "admits the step after the one in hand, before its push") {
  auto worker = start(train_mode::ssp, true);
  REQUIRE(s->clock_steps == std::vector<std::int64_t>{0});
  CHECK(s->events.empty());  // admitting
  admit(0);
  // The first batch's pull; at its compute the next step is asked for.
  CHECK(s->kinds() == kinds{"pull"});
  REQUIRE(s->clock_steps == std::vector<std::int64_t>{0, 1});
  admit(1);
  CHECK(s->kinds() == kinds{"pull", "pull"});
  answer_ticket(0, 0);
  REQUIRE(s->kinds() == kinds{"pull", "pull", "push"});
  CHECK(s->events[2].keys == s->events[0].keys);
  // The next step was admitted already: its compute asks for the one after.
  CHECK(s->clock_steps == std::vector<std::int64_t>{0, 1, 2});
  CHECK(s->tickets.size() == 2);
  stop(worker);
}

TEST_CASE_FIXTURE(rows_fixture,
                  "an ssp worker with staleness 0 pulls each batch's rows only after its push") {
  auto worker = start(train_mode::ssp, true, 0);
  admit(0);
  CHECK(s->kinds() == kinds{"pull"});
  answer_ticket(0, 0);
  CHECK(s->kinds() == kinds{"pull", "push"});
  CHECK(s->clock_steps == std::vector<std::int64_t>{0, 1});
  stop(worker);
}

TEST_CASE_FIXTURE(rows_fixture,
                  "a pipelined sync worker pulls each batch's rows only after its push") {
  auto worker = start(train_mode::sync, true);
  REQUIRE(s->events.size() >= 4);
  const auto k = s->kinds();
  CHECK(kinds(k.begin(), k.begin() + 4) == kinds{"pull", "push", "pull", "push"});
  stop(worker);
}

TEST_CASE_FIXTURE(rows_fixture,
                  "a pipelined ssp worker told the job is over while its next batch's rows are "
                  "pulled leaves without pushing again") {
  auto worker = start(train_mode::ssp, true);
  admit(0);
  admit(1);
  answer_ticket(0, 0);
  admit(2);
  CHECK(s->kinds() == kinds{"pull", "pull", "push", "pull"});
  answer_ticket(1, -1);
  CHECK(s->kinds() == kinds{"pull", "pull", "push", "pull"});
  CHECK(s->dones == std::vector<std::uint32_t>{0});
  stop(worker);
}

TEST_CASE_FIXTURE(rows_fixture,
                  "a pipelined ssp worker told to skip a bad batch computes the prefetched one "
                  "next, without pulling its rows again") {
  s->nan_pulls = 1;
  auto worker = start(train_mode::ssp, true);
  admit(0);
  admit(1);
  answer_ticket(0, 0);
  REQUIRE(s->verdicts.size() == 1);  // the first batch's loss is NaN: never pushed
  CHECK(s->kinds() == kinds{"pull", "pull"});
  answer(fakes[1], diverged_atom_v, 0, 1);  // skip it
  REQUIRE(s->kinds() == kinds{"pull", "pull", "push"});
  CHECK(s->events[2].keys == s->events[1].keys);  // the prefetched batch, with the ticket held
  stop(worker);
}

}  // namespace test_worker_row_prefetch
