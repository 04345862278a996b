// The chief's lifecycle at its edges (actors/chief_phase.hpp draws it):
// refusals, failures, sync drains and a job that starts at its end, on the
// stop supervisor with stand-ins (supervisor_phases.hpp).
#include <doctest/doctest.h>

#include "deterministic_fixture.hpp"  // the base of supervisor_fixture
#include "supervisor_phases.hpp"

namespace test_chief_phases_edges {

using namespace downpour::testing;

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

}  // namespace test_chief_phases_edges
