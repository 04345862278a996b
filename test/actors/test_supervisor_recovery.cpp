// The stop supervisor across a lost ps, with local actors: it pauses (no
// tickets, joining nodes wait, the chief's end request fails with
// `recovering`), and after the restore its tickets start at the restored
// step, so the job still ends at exactly the last step.
#include <doctest/doctest.h>

#include "actors/parameter_shard.hpp"
#include "actors/stop_supervisor.hpp"
#include "actors/sync_coordinator.hpp"
#include "actors/update_tally.hpp"
#include "model/mlp_spec.hpp"
#include "runtime/node/node.hpp"
#include "test_jobs.hpp"
#include "time_bounds.hpp"

namespace test_supervisor_recovery {

using namespace downpour;
using namespace std::chrono_literals;

namespace {

struct fixture {
  options opts = downpour::testing::local_job(2, 1, 100, "");
  node_config cfg{opts, mlp_spec{}.layout("mlp")};
  caf::actor_system sys{cfg};
  caf::scoped_actor self{sys};

  shard_actor shard(std::uint32_t index) {
    shard_config c;
    c.index = index;
    c.last_step = 100;
    return spawn_parameter_shard(sys, c);
  }

  std::int64_t ticket(const supervisor_actor& s) {
    std::int64_t got = -2;
    self->request(s, testing::scaled(5s), ticket_atom_v, std::uint32_t{0}, 0.5f)
        .receive([&](std::int64_t t) { got = t; }, [&](caf::error&) { got = -3; });
    return got;
  }
};

}  // namespace

TEST_CASE("the tally counts applied updates from the start step, a rollback's steps as lost, and "
          "adds up the pauses") {
  update_tally tally(40);
  CHECK(tally.counts().applied == 40);
  tally.record_applied(25);
  tally.record_rollback(65, 50);
  tally.record_failover_pause(0.5);
  tally.record_applied(50);  // from 50 to the last step, 100
  tally.record_failover_pause(0.25);
  const auto counts = tally.counts();
  CHECK(counts.applied == 115);
  CHECK(counts.lost == 15);
  CHECK(counts.applied - counts.lost == 100);
  CHECK(counts.failover_pause_s == doctest::Approx(0.75));
  // A restore to a checkpoint the shards had not passed loses nothing.
  tally.record_rollback(50, 50);
  tally.record_rollback(40, 50);
  CHECK(tally.counts().lost == 15);
}

TEST_CASE_FIXTURE(fixture, "a lost shard pauses the supervisor; the restore resumes its tickets "
                           "at the restored step") {
  std::vector<shard_actor> shards{shard(0), shard(1)};
  coordinator_config cc;
  cc.shards = shards;
  auto coordinator = spawn_sync_coordinator(sys, cc);
  supervisor_config c;
  c.fingerprint = "fp";
  c.last_step = 100;
  c.shards = shards;
  c.progress.last_step = 100;
  c.progress.quiet = true;
  c.coordinator = coordinator;
  c.workers = 1;
  auto tally = c.tally;
  auto sup = spawn_stop_supervisor(sys, std::move(c));
  CHECK(ticket(sup) == 0);
  CHECK(ticket(sup) == 1);
  CHECK(ticket(sup) == 2);
  for (int answered = 0; answered < 2; ++answered)  // ticket 2's push is still out
    self->send(sup, settle_atom_v, std::uint32_t{0}, std::int64_t{0});
  auto end = self->request(sup, caf::infinite, end_atom_v);
  const auto killed = std::chrono::steady_clock::now();
  self->send_exit(shards[1], caf::exit_reason::kill);
  caf::error ended;
  end.receive([](std::int64_t, float, std::string&) {}, [&](caf::error& err) { ended = err; });
  CHECK(ended == errc::recovering);
  CHECK(ticket(sup) == -3);  // refused while recovering
  auto hello = self->request(sup, testing::scaled(5s), hello_atom_v, hello_msg{"fp", hello_msg::to_chief, 1, {}});  // from this node: admitted
  std::vector<shard_actor> back{shards[0], shard(1)};
  std::int64_t resumed = -1;
  self->request(sup, testing::scaled(5s), restore_atom_v, recovery_plan{1, back, coordinator, saver_actor{}})
      .receive([&](std::int64_t s) { resumed = s; }, [](caf::error&) {});
  CHECK(resumed == 1);
  std::int64_t greeted = -1;
  hello.receive([&](std::int64_t s, coordinator_actor&) { greeted = s; }, [](caf::error&) {});
  CHECK(greeted == 1);  // the held hello is answered with the restored step
  CHECK(tally->counts().failover_pause_s == 0.0);  // until the first step after the restore
  for (std::int64_t expected = 1; expected < 99; ++expected) {
    REQUIRE(ticket(sup) == expected);
    if (expected == 1) {
      const double paused = tally->counts().failover_pause_s;
      CHECK(paused > 0.0);
      CHECK(paused <= std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count());
    }
    self->send(sup, settle_atom_v, std::uint32_t{0}, std::int64_t{0});  // every shard took it
  }
  REQUIRE(ticket(sup) == 99);
  self->send(sup, settle_atom_v, std::uint32_t{0}, std::int64_t{1});  // a refusal applies nothing
  CHECK(ticket(sup) == 99);  // its ticket came back
  self->send(sup, settle_atom_v, std::uint32_t{0}, std::int64_t{0});
  CHECK(ticket(sup) == -1);  // exactly last_step tickets in all
  // Steps 0 and 1 were answered before the loss, 1 was restored: 1 lost;
  // then 1 to 100 again.
  const auto counts = tally->counts();
  CHECK(counts.lost == 1);
  CHECK(counts.applied == 2 + 99);
  CHECK(counts.applied - counts.lost == 100);
  for (auto a : {caf::actor_cast<caf::actor>(sup), caf::actor_cast<caf::actor>(coordinator),
                 caf::actor_cast<caf::actor>(back[0]), caf::actor_cast<caf::actor>(back[1])})
    self->send_exit(a, caf::exit_reason::user_shutdown);
}

TEST_CASE_FIXTURE(fixture, "a status request is answered with the facts the supervisor gathered, "
                           "rendered by the renderer the chief gave") {
  auto coordinator = caf::actor_cast<coordinator_actor>(
      sys.spawn([](caf::event_based_actor*) -> caf::behavior {
        return {[](stats_atom) { return worker_stats{{0}, {1}}; }};
      }));
  auto saver = caf::actor_cast<saver_actor>(sys.spawn([](caf::event_based_actor*) -> caf::behavior {
    return {[](stats_atom) { return caf::make_message(std::string{"model.ckpt-7"}, 0.0); }};
  }));
  progress_config progress;
  progress.last_step = 100;
  progress.quiet = true;
  auto seen = std::make_shared<status_facts>();
  supervisor_config c;
  c.start_step = 7;
  c.last_step = 100;
  c.progress = progress;
  c.coordinator = coordinator;
  c.saver = saver;
  c.workers = 2;
  c.render_status = [seen](const status_facts& f) {
    *seen = f;
    return std::string{"rendered"};
  };
  auto sup = spawn_stop_supervisor(sys, std::move(c));
  std::string answer;
  self->request(sup, testing::scaled(5s), status_atom_v)
      .receive([&](std::string& text) { answer = text; }, [](caf::error&) {});
  CHECK(answer == "rendered");
  CHECK(seen->mode == "async");
  CHECK(seen->global_step == 7);
  CHECK(seen->expected_workers == 2);
  CHECK(seen->live_workers == std::vector<std::uint32_t>{0});
  CHECK(seen->dead_workers == std::vector<std::uint32_t>{1});
  CHECK(seen->last_checkpoint == "model.ckpt-7");
  for (auto a : {caf::actor_cast<caf::actor>(sup), caf::actor_cast<caf::actor>(coordinator),
                 caf::actor_cast<caf::actor>(saver)})
    self->send_exit(a, caf::exit_reason::user_shutdown);
}

}  // namespace test_supervisor_recovery
