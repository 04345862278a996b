// A worker that leases its tickets (--ticket-lease 4), on CAF's deterministic
// scheduler against stand-ins that record what it sent and hold the
// supervisor's answers until the test gives them: one request per lease,
// the answers told with the next request, unused tickets given back when it
// leaves or is recalled, and each answer told at once after a recall.
#include <doctest/doctest.h>

#include <memory>
#include <vector>

#include "actors/worker.hpp"
#include "data/idx.hpp"
#include "model/mlp.hpp"
#include "deterministic_fixture.hpp"

namespace test_worker_leases {

using namespace downpour;

namespace {

using answer_atom = caf::atom_constant<caf::atom("answer")>;

struct seen {
  std::int64_t pushes = 0;
  std::vector<caf::response_promise> held_pushes;
  bool hold_pushes = false;
  std::vector<caf::response_promise> leases;
  std::vector<ticket_tally> asked_with;  // the tally each lease request carried
  std::vector<ticket_tally> settles;
  std::vector<std::uint32_t> dones;
  caf::actor worker;
};

std::shared_ptr<const model> tiny_model() {
  static const auto m = mlp_model_of("mlp", mlp_spec{4, {3}, 2}, 1e-4f);
  return m;
}

std::shared_ptr<const dataset> tiny_data() {
  std::vector<std::uint8_t> pixels(16, 100);
  return std::make_shared<idx_images>(2, 2, pixels, std::vector<std::uint8_t>{0, 1, 0, 1});
}

caf::behavior fake_shard(caf::event_based_actor* self, std::shared_ptr<seen> s) {
  return {
      [=](pull_atom, std::int64_t) {
        return pull_reply{s->pushes, shared_tensor{std::vector<float>(tiny_model()->layout().size(), 0.5f)}};
      },
      [=](push_atom, const push_msg&) -> caf::result<std::int64_t> {
        ++s->pushes;
        if (!s->hold_pushes) return s->pushes;
        s->held_pushes.push_back(self->make_response_promise());
        return caf::delegated<std::int64_t>{};
      },
      [=](answer_atom, push_atom, std::size_t i) { s->held_pushes.at(i).deliver(std::int64_t{1}); },
  };
}

caf::behavior fake_supervisor(caf::event_based_actor* self, std::shared_ptr<seen> s) {
  return {
      [=](lease_atom, std::uint32_t, float, std::int64_t want, const ticket_tally& t) {
        CHECK(want == 4);
        s->asked_with.push_back(t);
        s->leases.push_back(self->make_response_promise());
        return s->leases.back();
      },
      [=](answer_atom, lease_atom, std::size_t i, std::int64_t first, std::int64_t count) {
        s->leases.at(i).deliver(first, count);
      },
      [=](recall_atom) { self->send(caf::actor_cast<worker_actor>(s->worker), recall_atom_v); },
      [=](settle_atom, std::uint32_t, const ticket_tally& t) { s->settles.push_back(t); },
      [=](done_atom, std::uint32_t w) { s->dones.push_back(w); },
  };
}

caf::behavior fake_coordinator(caf::event_based_actor*) {
  return {[](join_atom, std::uint32_t) {}, [](leave_atom, std::uint32_t, std::int64_t) {}};
}

struct lease_fixture : downpour::testing::deterministic_fixture {
  std::shared_ptr<seen> s = std::make_shared<seen>();
  caf::actor shard = sys->spawn(fake_shard, s);
  caf::actor supervisor = sys->spawn(fake_supervisor, s);
  caf::actor coordinator = sys->spawn(fake_coordinator);

  worker_actor start() {
    worker_config w;
    w.net = tiny_model();
    w.model_size = tiny_model()->layout().size();
    w.batch_size = 2;
    w.log_every = 1000;
    w.train = tiny_data();
    w.shards = {caf::actor_cast<shard_actor>(shard)};
    w.layouts = partition(tiny_model()->layout(), 1, placement_kind::balanced);
    w.supervisor = caf::actor_cast<supervisor_actor>(supervisor);
    w.coordinator = caf::actor_cast<coordinator_actor>(coordinator);
    w.mode = train_mode::async;
    w.last_step = 100;
    w.ticket_lease = 4;
    w.log = logger{"worker:0", log_level::error};
    auto worker = spawn_worker(*sys, std::move(w));
    s->worker = caf::actor_cast<caf::actor>(worker);
    (*chief)->send(worker, start_atom_v);
    run();
    return worker;
  }

  void lease(std::size_t i, std::int64_t first, std::int64_t count) {
    (*chief)->send(supervisor, answer_atom::value, lease_atom_v, i, first, count);
    run();
  }
  void answer_push(std::size_t i) {
    (*chief)->send(shard, answer_atom::value, push_atom_v, i);
    run();
  }
  void recall() {
    (*chief)->send(supervisor, recall_atom_v);
    run();
  }

  ~lease_fixture() {
    for (auto& a : {shard, supervisor, coordinator, s->worker})
      (*chief)->send_exit(a, caf::exit_reason::user_shutdown);
    run();
  }
};

}  // namespace

TEST_CASE_FIXTURE(lease_fixture, "a leasing worker asks once for 4 tickets, pushes 4 steps with no "
                                 "other message to the supervisor and tells their answers with "
                                 "its next ask, the one still out then before it leaves") {
  start();
  REQUIRE(s->leases.size() == 1);
  lease(0, 0, 4);
  CHECK(s->pushes == 4);
  REQUIRE(s->leases.size() == 2);
  CHECK(s->settles.empty());
  // Asked right after the fourth push, before its answer.
  CHECK(s->asked_with[1].answered == 3);
  CHECK(s->asked_with[1].refused == 0);
  lease(1, -1, 0);  // the job is over
  CHECK(s->pushes == 4);
  REQUIRE(s->settles.size() == 1);
  CHECK(s->settles[0].answered == 1);
  CHECK(s->settles[0].unused == 0);
  CHECK(s->dones == std::vector<std::uint32_t>{0});
}

TEST_CASE_FIXTURE(lease_fixture, "a recalled worker gives its unused tickets back at once and from "
                                 "then on tells each answer as it comes") {
  s->hold_pushes = true;
  start();
  lease(0, 0, 4);
  CHECK(s->pushes == 4);  // its pushes unanswered, its lease used up: it asks again
  REQUIRE(s->leases.size() == 2);
  lease(1, 4, 4);
  CHECK(s->pushes == 8);
  answer_push(0);
  CHECK(s->settles.empty());  // told with the next ask
  recall();
  REQUIRE(s->settles.size() == 1);
  CHECK(s->settles[0].answered == 1);
  CHECK(s->settles[0].unused == 0);  // its second lease is used up too
  answer_push(1);
  REQUIRE(s->settles.size() == 2);
  CHECK(s->settles[1].answered == 1);
}

TEST_CASE_FIXTURE(lease_fixture, "a leasing worker told to stop pushes the step in hand and leaves, "
                                 "giving back the tickets it did not use before it says done") {
  s->hold_pushes = true;
  auto worker = start();
  (*chief)->send(worker, stop_atom_v);
  run();
  lease(0, 10, 4);
  CHECK(s->pushes == 1);
  CHECK(s->dones.empty());  // waits for its push's answer first
  answer_push(0);
  REQUIRE(s->settles.size() == 1);
  CHECK(s->settles[0].answered == 1);
  CHECK(s->settles[0].unused == 3);
  CHECK(s->dones == std::vector<std::uint32_t>{0});
}

}  // namespace test_worker_leases
