// The stop supervisor's leases (--ticket-lease L > 1) on CAF's deterministic
// scheduler, with stand-ins for the workers that lease, push and tell their
// answers as actors/worker_lease.cpp does, each step on the test's command:
// exactly last_step - start_step tickets are spent, unused ones come back
// from a worker that leaves, dies, is recalled (another waits after the
// last ticket) or is stopped, and the job ends (or stops) at exactly the
// step of the pushes made. The ticket-by-ticket rules: test_supervisor_tickets.
#include <doctest/doctest.h>

#include <memory>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "actors/stop_supervisor.hpp"
#include "actors/supervisor_state.hpp"
#include "deterministic_fixture.hpp"

namespace test_supervisor_leases {

using namespace downpour;

namespace {

using use_atom = caf::atom_constant<caf::atom("use")>;
using answer_atom = caf::atom_constant<caf::atom("answer")>;

// What a leasing stand-in holds and heard.
struct leaser {
  std::int64_t next = 0;       // its lease's next unused ticket
  std::int64_t left = 0;       // and how many are left
  std::int64_t in_flight = 0;  // pushed, not answered by every shard
  std::int64_t pushed = 0;     // tickets used
  ticket_tally tally;          // answers not told yet
  bool recalled = false;
  int recalls = 0;
  std::vector<std::pair<std::int64_t, std::int64_t>> leases;  // (first, count) of each answer
  std::vector<caf::error> refusals;
};

void give_back(caf::event_based_actor* self, leaser& l, const supervisor_actor& sup,
               std::uint32_t index) {
  auto t = std::exchange(l.tally, ticket_tally{});
  t.unused = std::exchange(l.left, 0);
  if (t.answered > 0 || t.unused > 0) self->send(sup, settle_atom_v, index, t);
}

// On the test's command: asks for a lease (the answers since the last ask
// with it), uses n tickets of it, has one push answered (refused or not),
// leaves. Recalled, it gives its unused tickets back and tells each answer.
caf::behavior leasing_worker(caf::event_based_actor* self, std::shared_ptr<leaser> l,
                             supervisor_actor sup, std::uint32_t index, std::int64_t lease) {
  return {
      [=](lease_atom) {
        self->request(sup, caf::infinite, lease_atom_v, index, 0.25f, lease,
                      std::exchange(l->tally, ticket_tally{}))
            .then(
                [=](std::int64_t first, std::int64_t count) {
                  l->leases.emplace_back(first, count);
                  l->next = first;
                  l->left = count;
                },
                [=](caf::error& err) { l->refusals.push_back(err); });
      },
      [=](use_atom, std::int64_t n) {
        CHECK(l->left >= n);
        l->left -= n;
        l->next += n;
        l->pushed += n;
        l->in_flight += n;
      },
      [=](answer_atom, std::int64_t refused) {
        CHECK(l->in_flight > 0);
        --l->in_flight;
        ++l->tally.answered;
        l->tally.refused += refused;
        if (l->recalled) self->send(sup, settle_atom_v, index, std::exchange(l->tally, {}));
      },
      [=](recall_atom) {
        ++l->recalls;
        l->recalled = true;
        give_back(self, *l, sup, index);
      },
      [=](done_atom) {
        give_back(self, *l, sup, index);
        self->send(sup, done_atom_v, index);
      },
  };
}

caf::behavior instant_shard(caf::event_based_actor*) {
  return {[](join_atom) {}, [](await_atom, std::int64_t target) { return target; }};
}

caf::behavior instant_saver(caf::event_based_actor*) {
  return {[](save_atom, std::int64_t step) { return "model.ckpt-" + std::to_string(step); }};
}

caf::behavior quiet_coordinator(caf::event_based_actor*) {
  return {[](hello_atom, const caf::node_id&) {}};
}

struct worker_handle {
  caf::actor actor;
  std::shared_ptr<leaser> seen;
};

struct lease_fixture : downpour::testing::deterministic_fixture {
  std::vector<caf::actor> shards{sys->spawn(instant_shard), sys->spawn(instant_shard)};
  caf::actor saver = sys->spawn(instant_saver);
  caf::actor coordinator = sys->spawn(quiet_coordinator);
  supervisor_actor sup;
  std::vector<worker_handle> workers;
  std::optional<std::tuple<std::int64_t, float, std::string>> ended;

  void start(std::int64_t start_step, std::int64_t last_step) {
    supervisor_config c;
    c.fingerprint = "fp";
    c.start_step = start_step;
    c.last_step = last_step;
    for (auto& k : shards) c.shards.push_back(caf::actor_cast<shard_actor>(k));
    c.progress.start_step = start_step;
    c.progress.last_step = last_step;
    c.progress.quiet = true;
    c.coordinator = caf::actor_cast<coordinator_actor>(coordinator);
    c.saver = caf::actor_cast<saver_actor>(saver);
    c.workers = 2;
    c.log = logger{"chief", log_level::error};
    sup = spawn_stop_supervisor(*sys, std::move(c));
    run();
  }

  leaser& add_worker(std::uint32_t index, std::int64_t lease) {
    auto seen = std::make_shared<leaser>();
    workers.push_back({sys->spawn(leasing_worker, seen, sup, index, lease), seen});
    return *seen;
  }

  void tell(std::size_t w, caf::message m) {
    (*chief)->send(workers.at(w).actor, std::move(m));
    run();
  }
  void ask(std::size_t w) { tell(w, caf::make_message(lease_atom_v)); }
  void use(std::size_t w, std::int64_t n) { tell(w, caf::make_message(use_atom::value, n)); }
  void answer(std::size_t w, std::int64_t refused = 0) {
    tell(w, caf::make_message(answer_atom::value, refused));
  }
  // Uses n tickets of its lease, every push answered.
  void use_answered(std::size_t w, std::int64_t n) {
    use(w, n);
    for (std::int64_t i = 0; i < n; ++i) answer(w);
  }
  void done(std::size_t w) { tell(w, caf::make_message(done_atom_v)); }
  void kill(std::size_t w) {
    (*chief)->send_exit(workers.at(w).actor, caf::exit_reason::kill);
    run();
  }
  // The last answer worker w got: how many tickets (0: the job is over).
  std::int64_t last_count(std::size_t w) { return workers.at(w).seen->leases.back().second; }

  const stop_supervisor_state& state() {
    auto ptr = caf::actor_cast<caf::abstract_actor*>(sup);
    return dynamic_cast<supervisor_actor::stateful_base<stop_supervisor_state>&>(*ptr).state;
  }

  void ask_end() {
    auto target = sup;
    sys->spawn([=](caf::event_based_actor* self) {
      self->request(target, caf::infinite, end_atom_v)
          .then([=](std::int64_t step, float loss,
                    std::string& why) { ended = std::make_tuple(step, loss, why); },
                [=](caf::error&) {});
    });
    run();
  }
  std::int64_t end_step() {
    REQUIRE(ended.has_value());
    return std::get<0>(*ended);
  }

  ~lease_fixture() {
    for (auto a : {caf::actor_cast<caf::actor>(sup), saver, coordinator})
      (*chief)->send_exit(a, caf::exit_reason::user_shutdown);
    for (auto& k : shards) (*chief)->send_exit(k, caf::exit_reason::user_shutdown);
    for (auto& w : workers) (*chief)->send_exit(w.actor, caf::exit_reason::user_shutdown);
    run();
  }
};

// Each worker in turn asks, uses its whole lease with every push answered,
// and asks again, until both heard the job is over: the tickets they used.
std::int64_t lease_until_over(lease_fixture& f) {
  std::vector<bool> over(f.workers.size(), false);
  for (bool any = true; any;) {
    any = false;
    for (std::size_t w = 0; w < f.workers.size(); ++w) {
      if (over[w]) continue;
      f.ask(w);
      REQUIRE_FALSE(f.workers[w].seen->leases.empty());
      const auto n = f.last_count(w);
      over[w] = n == 0;
      any = any || n > 0;
      f.use_answered(w, n);
    }
  }
  std::int64_t used = 0;
  for (auto& w : f.workers) used += w.seen->pushed;
  return used;
}

}  // namespace

TEST_CASE_FIXTURE(lease_fixture, "two workers leasing 4 tickets take exactly last_step - start_step "
                                 "between them in one request per lease, and the job ends at the "
                                 "last step") {
  start(3, 20);
  add_worker(0, 4);
  add_worker(1, 4);
  CHECK(lease_until_over(*this) == 17);
  for (auto& w : workers)
    for (auto& [first, count] : w.seen->leases) CHECK(count <= 4);
  // 17 tickets in leases of 4, 4, 4, 4, 1, then one ask each that hears the end.
  CHECK(state().ticket_requests == 7);
  done(0);
  done(1);
  ask_end();
  CHECK(end_step() == 20);
}

TEST_CASE_FIXTURE(lease_fixture, "a worker that leaves with unused leased tickets gives them back, "
                                 "and the other worker's leases take them: the job ends at the "
                                 "last step") {
  start(0, 10);
  add_worker(0, 4);
  add_worker(1, 4);
  ask(0);
  use_answered(0, 1);
  done(0);  // 3 unused come back with its answer
  CHECK(state().granted == 1);
  std::int64_t taken = 0;
  for (ask(1); last_count(1) > 0; ask(1)) {
    taken += last_count(1);
    use_answered(1, last_count(1));
  }
  CHECK(taken == 9);
  done(1);
  ask_end();
  CHECK(end_step() == 10);
}

TEST_CASE_FIXTURE(lease_fixture, "a worker that dies holding leased tickets gives back the unused "
                                 "ones and those of pushes it had not told answered: the job "
                                 "ends at the last step") {
  start(0, 10);
  add_worker(0, 4);
  add_worker(1, 4);
  ask(0);
  use(0, 2);
  answer(0);  // answered, but told only with its next ask: lost with it
  kill(0);
  CHECK(state().granted == 0);
  std::int64_t taken = 0;
  for (ask(1); last_count(1) > 0; ask(1)) {
    taken += last_count(1);
    use_answered(1, last_count(1));
  }
  CHECK(taken == 10);
  done(1);
  ask_end();
  CHECK(end_step() == 10);
}

TEST_CASE_FIXTURE(lease_fixture, "an ask after the last ticket recalls the leases not used up and "
                                 "gets their tickets back: a worker held back (ssp's staleness "
                                 "bound) never keeps the last steps from the others") {
  start(0, 8);
  auto& held = add_worker(0, 4);
  add_worker(1, 4);
  ask(0);
  use(0, 1);  // then held back: pushes no more for now
  ask(1);
  use_answered(1, 4);
  ask(1);  // the last tickets are out: waits, and worker 0 is recalled
  CHECK(held.recalls == 1);
  CHECK(workers[1].seen->leases.back() == std::make_pair(std::int64_t{5}, std::int64_t{3}));
  answer(0);  // recalled: told at once
  use_answered(1, 3);
  ask(1);
  CHECK(last_count(1) == 0);
  ask(0);
  CHECK(last_count(0) == 0);
  done(0);
  done(1);
  ask_end();
  CHECK(end_step() == 8);
}

TEST_CASE_FIXTURE(lease_fixture, "a stop recalls every lease: the unused tickets come back and the "
                                 "stop step counts only the pushes made") {
  start(0, 100);
  auto& a = add_worker(0, 8);
  auto& b = add_worker(1, 8);
  ask(0);
  use_answered(0, 3);
  ask(1);
  use_answered(1, 2);
  use(1, 1);  // in flight as the stop comes
  (*chief)->send(sup, stop_atom_v, std::string{"SIGTERM"});
  run();
  CHECK(a.recalls == 1);
  CHECK(b.recalls == 1);
  CHECK(state().granted == 6);
  answer(1);
  ask(0);
  ask(1);
  CHECK(a.refusals.size() == 1);
  CHECK(b.refusals.size() == 1);
  CHECK(a.refusals.back() == errc::interrupted);
  done(0);
  done(1);
  ask_end();
  CHECK(end_step() == 6);
}

TEST_CASE_FIXTURE(lease_fixture, "a push refused by a shard, told with the next ask, gives its "
                                 "ticket back: the job still ends at the last step") {
  start(0, 10);
  add_worker(0, 4);
  std::int64_t refused = 0;
  for (ask(0); last_count(0) > 0; ask(0)) {
    use(0, last_count(0));
    for (std::int64_t i = 0; i < last_count(0); ++i) {
      const std::int64_t no = refused < 3 && i == 0 ? 1 : 0;
      refused += no;
      answer(0, no);
    }
  }
  CHECK(refused == 3);
  CHECK(workers[0].seen->pushed == 13);
  done(0);
  ask_end();
  CHECK(end_step() == 10);
}

TEST_CASE_FIXTURE(lease_fixture, "after a lost ps the restore starts the leases at the restored "
                                 "step, and the job ends at the last step") {
  start(0, 10);
  add_worker(0, 4);
  ask(0);
  use_answered(0, 2);
  (*chief)->send_exit(shards[1], caf::exit_reason::kill);
  run();
  ask(0);
  REQUIRE(workers[0].seen->refusals.size() == 1);
  CHECK(workers[0].seen->refusals.back() == errc::recovering);
  kill(0);  // it went down with the shard; its node joins again
  shards[1] = sys->spawn(instant_shard);
  recovery_plan plan;
  plan.step = 2;
  for (auto& k : shards) plan.shards.push_back(caf::actor_cast<shard_actor>(k));
  plan.coordinator = caf::actor_cast<coordinator_actor>(coordinator);
  plan.saver = caf::actor_cast<saver_actor>(saver);
  CHECK(deterministic_fixture::ask<std::int64_t>(sup, restore_atom_v, plan) == 2);
  add_worker(0, 4);
  std::int64_t taken = 0;
  for (ask(1); last_count(1) > 0; ask(1)) {
    if (taken == 0) CHECK(workers[1].seen->leases.back().first == 2);
    taken += last_count(1);
    use_answered(1, last_count(1));
  }
  CHECK(taken == 8);
  done(1);
  ask_end();
  CHECK(end_step() == 10);
}

TEST_CASE_FIXTURE(lease_fixture, "status and progress count a lease's steps once its worker asks "
                                 "again or gives the rest back") {
  start(0, 100);
  add_worker(0, 4);
  ask(0);
  CHECK(state().granted == 4);
  CHECK(counted_step(state()) == 0);
  use_answered(0, 4);
  ask(0);
  CHECK(counted_step(state()) == 4);
  use_answered(0, 1);
  done(0);
  CHECK(counted_step(state()) == 5);
  CHECK(state().progress_fed == 5);
}

}  // namespace test_supervisor_leases
