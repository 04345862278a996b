// The chief's lifecycle (actors/chief_phase.hpp draws it): the table of its
// arrows, and the stop supervisor walking its part on CAF's deterministic
// scheduler. The shards, the saver, the coordinator and the worker are
// stand-ins that record what the supervisor asked and hold every answer
// until the test gives it, so each phase is seen alone.
#include <doctest/doctest.h>

#include <stdexcept>

#include "deterministic_fixture.hpp"  // the base of supervisor_fixture
#include "supervisor_phases.hpp"

namespace test_chief_phases {

using namespace downpour::testing;

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

}  // namespace test_chief_phases
