// The chief's lifecycle (actors/chief_phase.hpp draws it): the table of its
// arrows, and the stop supervisor walking its part on CAF's deterministic
// scheduler. The shards, the saver, the coordinator and the worker are
// stand-ins that record what the supervisor asked and hold every answer
// until the test gives it, so each phase is seen alone.
#include <doctest/doctest.h>

#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include "actors/chief_phase.hpp"
#include "actors/stop_supervisor.hpp"
#include "actors/supervisor_state.hpp"
#include "deterministic_fixture.hpp"

using namespace downpour;
using phase = chief_phase;

TEST_CASE("the chief's lifecycle allows exactly the arrows its diagram draws") {
  const std::set<std::pair<phase, phase>> arrows{
      {phase::starting, phase::initialising_shards},
      {phase::initialising_shards, phase::training},
      {phase::training, phase::stopping},
      {phase::training, phase::draining},
      {phase::training, phase::recovering},
      {phase::recovering, phase::training},
      {phase::recovering, phase::stopping},
      {phase::stopping, phase::draining},
      {phase::stopping, phase::saving_last_checkpoint},
      {phase::stopping, phase::recovering},
      {phase::draining, phase::stopping},
      {phase::draining, phase::saving_last_checkpoint},
      {phase::draining, phase::stopping_nodes},
      {phase::draining, phase::recovering},
      {phase::saving_last_checkpoint, phase::stopping_nodes},
      {phase::saving_last_checkpoint, phase::stopping},
      {phase::saving_last_checkpoint, phase::recovering},
      {phase::stopping_nodes, phase::done},
      {phase::failed, phase::stopping_nodes},
      {phase::failed, phase::done},
      {phase::starting, phase::failed},
      {phase::initialising_shards, phase::failed},
      {phase::training, phase::failed},
      {phase::recovering, phase::failed},
      {phase::stopping, phase::failed},
      {phase::draining, phase::failed},
      {phase::saving_last_checkpoint, phase::failed},
  };
  for (int f = 0; f <= static_cast<int>(phase::failed); ++f)
    for (int t = 0; t <= static_cast<int>(phase::failed); ++t) {
      const auto from = static_cast<phase>(f);
      const auto to = static_cast<phase>(t);
      CAPTURE(to_string(from));
      CAPTURE(to_string(to));
      CHECK(allowed_transition(from, to) == (arrows.count({from, to}) == 1));
      chief_lifecycle life{from};
      if (arrows.count({from, to})) {
        life.enter(to);
        CHECK(life.phase() == to);
      } else {
        CHECK_THROWS_AS(life.enter(to), std::logic_error);
        CHECK(life.phase() == from);  // a refused move leaves the phase as it was
      }
    }
}

TEST_CASE("a move the diagram lacks is refused with both phases named") {
  chief_lifecycle life;
  CHECK(life.is(phase::starting));
  CHECK_THROWS_WITH(life.enter(phase::training), "the chief cannot go from starting to training");
  chief_lifecycle done{phase::done};
  CHECK_THROWS_WITH(done.enter(phase::failed), "the chief cannot go from done to failed");
  CHECK_THROWS_WITH(chief_lifecycle{phase::stopping_nodes}.enter(phase::training),
                    "the chief cannot go from stopping_nodes to training");
}

namespace {

// A held answer is given by the stand-in that holds it, inside its own
// handler: a promise delivered from outside an actor has no execution
// context on the test scheduler.
using answer_atom = caf::atom_constant<caf::atom("answer")>;

// What the stand-ins saw, and the answers they hold.
struct seen {
  std::vector<std::pair<std::size_t, std::int64_t>> awaits;  // (shard, target)
  std::vector<caf::response_promise> await_answers;
  std::vector<std::int64_t> saves;
  std::vector<caf::response_promise> save_answers;
  std::vector<std::int64_t> tickets;  // the worker's: a ticket, or -100 - the error code
  std::vector<std::int64_t> verdicts;
  std::optional<std::tuple<std::int64_t, float, std::string>> end;
  caf::error end_error;
};

std::int64_t code_of(const caf::error& err) {
  return -100 - static_cast<std::int64_t>(err.code());
}

constexpr auto recovering_code = -100 - static_cast<std::int64_t>(errc::recovering);
constexpr auto interrupted_code = -100 - static_cast<std::int64_t>(errc::interrupted);
constexpr auto diverged_code = -100 - static_cast<std::int64_t>(errc::diverged);

caf::behavior fake_shard(caf::event_based_actor* self, std::shared_ptr<seen> s, std::size_t k) {
  return {
      [=](answer_atom, std::size_t i, std::int64_t x) { s->await_answers.at(i).deliver(x); },
      [=](join_atom) {},
      [=](await_atom, std::int64_t target) {
        s->awaits.emplace_back(k, target);
        s->await_answers.push_back(self->make_response_promise());
        return s->await_answers.back();
      },
  };
}

caf::behavior fake_saver(caf::event_based_actor* self, std::shared_ptr<seen> s) {
  return {
      [=](answer_atom, std::size_t i) { s->save_answers.at(i).deliver(std::string{"saved"}); },
      [=](answer_atom, std::size_t i, caf::error& err) { s->save_answers.at(i).deliver(err); },
      [=](save_atom, std::int64_t step) {
        s->saves.push_back(step);
        s->save_answers.push_back(self->make_response_promise());
        return s->save_answers.back();
      },
  };
}

caf::behavior fake_coordinator(caf::event_based_actor*) {
  return {[](hello_atom, const caf::node_id&) {}};
}

// Worker 0, on the test's command: asks for a ticket, reports a bad batch,
// says done. It lives on, so the supervisor's watch on it stays quiet.
caf::behavior fake_worker(caf::event_based_actor* self, std::shared_ptr<seen> s,
                          supervisor_actor sup) {
  auto record = [](std::vector<std::int64_t>& into) {
    return std::make_pair([&into](std::int64_t x) { into.push_back(x); },
                          [&into](caf::error& err) { into.push_back(code_of(err)); });
  };
  return {
      [=](ticket_atom) {
        auto err = record(s->tickets).second;
        // Every shard accepts its push at once: the ticket is settled.
        auto ok = [=](std::int64_t t) {
          s->tickets.push_back(t);
          if (t >= 0) self->send(sup, settle_atom_v, std::uint32_t{0}, std::int64_t{0});
        };
        self->request(sup, caf::infinite, ticket_atom_v, std::uint32_t{0}, 0.25f).then(ok, err);
      },
      [=](diverged_atom, std::int64_t step) {
        auto [ok, err] = record(s->verdicts);
        self->request(sup, caf::infinite, diverged_atom_v, std::uint32_t{0}, step,
                      std::numeric_limits<float>::infinity())
            .then(ok, err);
      },
      [=](done_atom) { self->send(sup, done_atom_v, std::uint32_t{0}); },
  };
}

struct supervisor_fixture : downpour::testing::deterministic_fixture {
  std::shared_ptr<seen> s = std::make_shared<seen>();
  std::vector<caf::actor> shards;
  caf::actor saver = sys->spawn(fake_saver, s);
  caf::actor coordinator = sys->spawn(fake_coordinator);
  supervisor_actor sup;
  caf::actor worker;

  void start(train_mode mode, std::int64_t start_step, std::int64_t last_step,
             std::int64_t max_bad_batches = 0) {
    shards = {sys->spawn(fake_shard, s, std::size_t{0}), sys->spawn(fake_shard, s, std::size_t{1})};
    supervisor_config c;
    c.fingerprint = "fp";
    c.start_step = start_step;
    c.last_step = last_step;
    for (auto& k : shards) c.shards.push_back(caf::actor_cast<shard_actor>(k));
    c.progress.start_step = start_step;
    c.progress.last_step = last_step;
    c.progress.quiet = true;
    c.mode = mode;
    c.coordinator = caf::actor_cast<coordinator_actor>(coordinator);
    c.saver = caf::actor_cast<saver_actor>(saver);
    c.workers = 1;
    c.log = logger{"chief", log_level::error};
    c.max_bad_batches = max_bad_batches;
    sup = spawn_stop_supervisor(*sys, std::move(c));
    worker = sys->spawn(fake_worker, s, sup);
    run();
  }

  phase now() {
    auto ptr = caf::actor_cast<caf::abstract_actor*>(sup);
    return dynamic_cast<supervisor_actor::stateful_base<stop_supervisor_state>&>(*ptr)
        .state.life.phase();
  }

  void tell(const caf::actor& whom, caf::message m) {
    (*chief)->send(whom, std::move(m));
    run();
  }
  void ticket() { tell(worker, caf::make_message(ticket_atom_v)); }
  void done() { tell(worker, caf::make_message(done_atom_v)); }
  void answer_await(std::size_t i, std::int64_t x) {
    tell(shards.at(s->awaits.at(i).first), caf::make_message(answer_atom::value, i, x));
  }
  void answer_save(std::size_t i) { tell(saver, caf::make_message(answer_atom::value, i)); }
  void refuse_save(std::size_t i, caf::error err) {
    tell(saver, caf::make_message(answer_atom::value, i, std::move(err)));
  }
  void stop(const std::string& why) {
    (*chief)->send(sup, stop_atom_v, why);
    run();
  }

  void lose_shard(std::size_t k) {
    (*chief)->send_exit(shards[k], caf::exit_reason::kill);
    run();
  }

  // Shard k started again, every shard restored at step: the supervisor's answer.
  std::int64_t restore(std::size_t k, std::int64_t step) {
    shards[k] = sys->spawn(fake_shard, s, k);
    recovery_plan plan;
    plan.step = step;
    for (auto& shard : shards) plan.shards.push_back(caf::actor_cast<shard_actor>(shard));
    plan.coordinator = caf::actor_cast<coordinator_actor>(coordinator);
    plan.saver = caf::actor_cast<saver_actor>(saver);
    return ask<std::int64_t>(sup, restore_atom_v, plan);
  }

  // The chief's end request; its answer lands in s->end or s->end_error.
  void ask_end() {
    auto target = sup;
    auto out = s;
    sys->spawn([=](caf::event_based_actor* self) {
      self->request(target, caf::infinite, end_atom_v)
          .then([=](std::int64_t step, float loss,
                    std::string& why) { out->end = std::make_tuple(step, loss, why); },
                [=](caf::error& err) { out->end_error = err; });
    });
    run();
  }

  ~supervisor_fixture() {
    for (auto a : {caf::actor_cast<caf::actor>(sup), saver, coordinator, worker})
      (*chief)->send_exit(a, caf::exit_reason::user_shutdown);
    for (auto& k : shards) (*chief)->send_exit(k, caf::exit_reason::user_shutdown);
    run();
  }
};

}  // namespace

TEST_CASE_FIXTURE(supervisor_fixture,
                  "at the last step the supervisor drains, has the last checkpoint written, "
                  "then tells the end") {
  start(train_mode::async, 0, 2);
  CHECK(now() == phase::training);
  ticket();
  ticket();
  ticket();
  CHECK(s->tickets == std::vector<std::int64_t>{0, 1, -1});
  ask_end();
  CHECK(now() == phase::training);  // the worker has not said done: a push may be out
  CHECK(s->awaits.empty());
  done();
  CHECK(now() == phase::draining);
  REQUIRE(s->awaits == std::vector<std::pair<std::size_t, std::int64_t>>{{0, 2}, {1, 2}});
  answer_await(0, 2);
  CHECK(now() == phase::draining);
  answer_await(1, 2);
  CHECK(now() == phase::saving_last_checkpoint);
  CHECK(s->saves == std::vector<std::int64_t>{2});
  CHECK_FALSE(s->end);  // told only once the checkpoint is written
  answer_save(0);
  CHECK(now() == phase::stopping_nodes);
  REQUIRE(s->end);
  CHECK(std::get<0>(*s->end) == 2);
  CHECK(std::get<2>(*s->end).empty());
  chief_lifecycle chief{now()};  // run_chief goes on from where the supervisor's walk ended
  chief.enter(phase::done);
}

TEST_CASE_FIXTURE(supervisor_fixture,
                  "every worker's passes done before the last step: the supervisor drains at "
                  "the step reached and has its checkpoint written") {
  start(train_mode::async, 0, 100);
  ticket();
  ticket();
  ask_end();
  CHECK(now() == phase::training);
  done();  // streamed input: its passes over its share are done
  CHECK(now() == phase::draining);
  REQUIRE(s->awaits == std::vector<std::pair<std::size_t, std::int64_t>>{{0, 2}, {1, 2}});
  answer_await(0, 2);
  answer_await(1, 2);
  CHECK(s->saves == std::vector<std::int64_t>{2});
  answer_save(0);
  CHECK(now() == phase::stopping_nodes);
  REQUIRE(s->end);
  CHECK(std::get<0>(*s->end) == 2);
  CHECK(std::get<2>(*s->end).empty());  // completed, not stopped
}

TEST_CASE_FIXTURE(supervisor_fixture,
                  "sync, draining toward the last step, drains on toward the last round "
                  "pushed for once every worker's passes are done") {
  start(train_mode::sync, 0, 100);
  ask_end();
  REQUIRE(s->awaits.size() == 2);
  CHECK(s->awaits[0].second == 100);
  (*chief)->send(sup, report_atom_v, std::uint32_t{0}, std::int64_t{7}, 0.5f);
  run();
  done();
  CHECK(now() == phase::draining);
  REQUIRE(s->awaits.size() == 4);
  CHECK(s->awaits[2].second == 7);
  CHECK(s->awaits[3].second == 7);
  answer_await(0, 100);  // the old drain's answers change nothing
  CHECK(s->saves.empty());
  answer_await(2, 7);
  answer_await(3, 7);
  CHECK(s->saves == std::vector<std::int64_t>{7});
  answer_save(0);
  REQUIRE(s->end);
  CHECK(std::get<0>(*s->end) == 7);
}

TEST_CASE_FIXTURE(supervisor_fixture,
                  "a stop walks training, stopping, draining and saving_last_checkpoint to "
                  "stopping_nodes, with the checkpoint at the step reached") {
  start(train_mode::async, 0, 100);
  ticket();
  ticket();
  ticket();  // holds ticket 2: its push may still be out
  ask_end();
  stop("SIGTERM");
  CHECK(now() == phase::stopping);
  ticket();
  CHECK(s->tickets.back() == interrupted_code);
  CHECK(s->awaits.empty());
  done();
  CHECK(now() == phase::draining);
  REQUIRE(s->awaits.size() == 2);
  CHECK(s->awaits[0].second == 3);
  answer_await(0, 3);
  answer_await(1, 3);
  CHECK(now() == phase::saving_last_checkpoint);
  CHECK(s->saves == std::vector<std::int64_t>{3});
  answer_save(0);
  CHECK(now() == phase::stopping_nodes);
  REQUIRE(s->end);
  CHECK(std::get<0>(*s->end) == 3);
  CHECK(std::get<2>(*s->end) == "SIGTERM");
  stop("SIGINT");  // the job is over: a second stop changes nothing
  CHECK(now() == phase::stopping_nodes);
}

TEST_CASE_FIXTURE(supervisor_fixture,
                  "a lost ps pauses the supervisor in recovering until the restore, which "
                  "resumes training at the restored step") {
  start(train_mode::async, 0, 100);
  ticket();
  ticket();
  ask_end();
  lose_shard(1);
  CHECK(now() == phase::recovering);
  CHECK(s->end_error == errc::recovering);
  ticket();
  CHECK(s->tickets.back() == recovering_code);
  CHECK(restore(1, 1) == 1);
  CHECK(now() == phase::training);
  ticket();
  CHECK(s->tickets.back() == 1);  // the tickets restart at the restored step
}

TEST_CASE_FIXTURE(supervisor_fixture,
                  "told to stop while recovering, the restored supervisor goes on stopping") {
  start(train_mode::async, 0, 100);
  ticket();
  lose_shard(0);
  stop("SIGTERM");
  CHECK(now() == phase::recovering);
  CHECK(restore(0, 0) == 0);
  CHECK(now() == phase::stopping);
  ask_end();
  CHECK(now() == phase::draining);  // no worker holds a ticket of the restored job
  REQUIRE(s->awaits.size() == 2);
  CHECK(s->awaits[0].second == 0);
  answer_await(0, 0);
  answer_await(1, 0);
  CHECK(s->saves == std::vector<std::int64_t>{0});
  answer_save(0);
  REQUIRE(s->end);
  CHECK(std::get<2>(*s->end) == "SIGTERM");
}

TEST_CASE_FIXTURE(supervisor_fixture, "a restore while no ps is lost is refused") {
  start(train_mode::async, 0, 100);
  recovery_plan plan;
  plan.step = 0;
  auto answer = request<std::int64_t>(sup, restore_atom_v, plan);
  CHECK_FALSE(answer->has_value());
  CHECK(now() == phase::training);
}

TEST_CASE_FIXTURE(supervisor_fixture,
                  "a bad batch beyond --max-bad-batches fails the job: every end and ticket "
                  "request gets the divergence, and a lost ps changes nothing") {
  start(train_mode::async, 0, 100, 1);
  ticket();
  tell(worker, caf::make_message(diverged_atom_v, std::int64_t{0}));
  CHECK(s->verdicts == std::vector<std::int64_t>{1});  // one bad batch is skipped
  CHECK(now() == phase::training);
  ask_end();
  tell(worker, caf::make_message(diverged_atom_v, std::int64_t{0}));
  CHECK(s->verdicts.back() == diverged_code);
  CHECK(now() == phase::failed);
  CHECK(s->end_error == errc::diverged);
  ticket();
  CHECK(s->tickets.back() == diverged_code);
  lose_shard(1);
  CHECK(now() == phase::failed);
  CHECK(s->saves.empty());  // nothing is saved from a diverged job
}

TEST_CASE_FIXTURE(supervisor_fixture,
                  "sync drains from the chief's end request on; a stop takes the checkpoint a "
                  "few rounds ahead of shard 0") {
  start(train_mode::sync, 0, 100);
  ask_end();
  CHECK(now() == phase::draining);  // the shards run the rounds to the last step themselves
  REQUIRE(s->awaits.size() == 2);
  CHECK(s->awaits[0].second == 100);
  stop("SIGTERM");
  CHECK(now() == phase::stopping);
  REQUIRE(s->awaits.size() == 3);  // shard 0, asked where it is
  CHECK(s->awaits[2] == std::make_pair(std::size_t{0}, std::int64_t{0}));
  answer_await(2, 40);
  CHECK(now() == phase::saving_last_checkpoint);
  CHECK(s->saves == std::vector<std::int64_t>{42});
  answer_save(0);
  CHECK(now() == phase::stopping_nodes);
  REQUIRE(s->end);
  CHECK(std::get<0>(*s->end) == 42);
  answer_await(0, 100);  // the drain's answers after the end change nothing
  answer_await(1, 100);
  CHECK(s->saves.size() == 1);
}

TEST_CASE_FIXTURE(supervisor_fixture,
                  "a sync stop whose step the shards passed before the saver asked is taken "
                  "again further on") {
  start(train_mode::sync, 0, 100);
  ask_end();
  stop("SIGTERM");
  answer_await(2, 40);
  REQUIRE(s->saves == std::vector<std::int64_t>{42});
  refuse_save(0, caf::make_error(errc::step_passed, "the shard is past step 42"));
  CHECK(now() == phase::stopping);
  REQUIRE(s->awaits.size() == 4);  // shard 0, asked again where it is
  answer_await(3, 50);
  CHECK(s->saves == std::vector<std::int64_t>{42, 52});
  answer_save(1);
  CHECK(now() == phase::stopping_nodes);
  REQUIRE(s->end);
  CHECK(std::get<0>(*s->end) == 52);
}

TEST_CASE_FIXTURE(supervisor_fixture, "a save that fails for another reason fails the job") {
  start(train_mode::async, 0, 1);
  ticket();
  ticket();
  ask_end();
  done();
  answer_await(0, 1);
  answer_await(1, 1);
  refuse_save(0, caf::make_error(errc::save_failed, "disk full"));
  CHECK(now() == phase::failed);
  CHECK(s->end_error == errc::save_failed);
}

TEST_CASE_FIXTURE(supervisor_fixture,
                  "a job that starts at its last step ends without saving it again") {
  start(train_mode::async, 5, 5);
  ask_end();
  CHECK(now() == phase::draining);
  answer_await(0, 5);
  answer_await(1, 5);
  CHECK(now() == phase::stopping_nodes);
  CHECK(s->saves.empty());
  REQUIRE(s->end);
  CHECK(std::get<0>(*s->end) == 5);
}
