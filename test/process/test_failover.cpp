// --ps-replicas 2 across processes: a ps killed with -9 costs no rollback.
// Its shard's backup on the other ps is promoted, every shard is brought to
// one step, and the job ends at exactly --last-step with every survivor
// exiting 0; no checkpoint is read (none but the start one exists).
#include <doctest/doctest.h>

#include <chrono>
#include <csignal>

#include "cluster_procs.hpp"

namespace test_failover {

using namespace downpour;
using namespace downpour::testing;
using namespace std::chrono_literals;

namespace {

const std::vector<std::string> job = {"--last-step=2000",      "--log-every=50",
                                      "--save-checkpoint-steps=100000", "--save-checkpoint-secs=0",
                                      "--connect-timeout=30",  "--ps-replicas=2"};

struct failover_run {
  std::string chief_out;
  failover_line line;
  double pause_s = 0;  // from the kill to the chief's "training resumes"
  std::int64_t lost = 0;  // the final line's updates lost
};

// Kills ps `victim` once worker 1 has logged progress, then checks what every
// failover must give: exact end, survivors exit 0, no restore, the shard
// moved to the survivor.
failover_run kill_one_ps(const std::string& name, int victim, std::vector<std::string> extra) {
  temp_dir dir(name);
  auto args = job;
  args.insert(args.end(), extra.begin(), extra.end());
  auto c = make_cluster(2, 2, dir, args);
  two_by_two nodes(c, dir);
  auto& [ps0, ps1, chief, w1] = nodes;
  process& dead = victim == 0 ? ps0 : ps1;
  process& survivor = victim == 0 ? ps1 : ps0;
  REQUIRE(survivor.wait_for_output("a backup on another ps joined", 60s));
  REQUIRE(w1.wait_for_output(",step:200,", 120s));
  const auto killed = std::chrono::steady_clock::now();
  dead.kill(SIGKILL);
  REQUIRE_MESSAGE(chief.wait_for_output("training resumes at global step", 30s), chief.output());
  failover_run r;
  r.pause_s = seconds_since(killed);
  CHECK(dead.wait(30s) == 128 + SIGKILL);
  for (auto* p : {&chief, &w1, &survivor}) {
    CAPTURE(p->output());
    CHECK(p->wait(300s) == 0);
  }
  r.chief_out = chief.output();
  CAPTURE(r.chief_out);
  REQUIRE(final_of(r.chief_out));
  CHECK(final_of(r.chief_out)->global_step == 2000);
  CHECK(r.chief_out.find("shard " + std::to_string(victim) + " fails over to its backup on ps " +
                         std::to_string(1 - victim)) != std::string::npos);
  CHECK(restored_step(r.chief_out) == -1);  // nothing rolled back: no checkpoint read
  CHECK(r.chief_out.find("rolls back") == std::string::npos);
  REQUIRE(failover_of(r.chief_out));
  r.line = *failover_of(r.chief_out);
  CHECK(r.line.step >= 200);
  // Counted: nothing rolled back, so every step's update is applied; the
  // ones the lost primary had taken alone are lost, unless their workers
  // sent them again (owed, then filled); the pause is within the time to
  // the resume line.
  const auto fin = *final_of(r.chief_out);
  r.lost = fin.updates_lost;
  CHECK(fin.updates_applied == 2000);
  CHECK(fin.updates_lost >= r.line.lost);
  CHECK(fin.updates_lost <= r.line.lost + r.line.owed);
  CHECK(fin.failover_pause_s > 0.0);
  CHECK(fin.failover_pause_s < seconds_since(killed));
  MESSAGE(name << ": failed over in " << r.line.seconds << " s at global step " << r.line.step
               << ", " << r.line.owed << " update(s) owed and sent again, " << r.lost
               << " lost; training resumed " << r.pause_s << " s after the kill");
  return r;
}

}  // namespace

TEST_CASE("async, --ps-replicas 2: ps 1 killed with -9 fails over to its backup on ps 0 within "
          "2 s, nothing rolls back, and the job ends at exactly its last step") {
  const auto r = kill_one_ps("failover-async", 1, {});
  CHECK(r.pause_s < 2.0);
  // The pushes each worker had on their way to the lost primary are sent
  // again by its node and taken where they are owed: none lost.
  CHECK(r.line.lost == 0);
  CHECK(r.lost == 0);
  CHECK(final_of(r.chief_out)->test_accuracy > 0.8);
}

TEST_CASE("ssp, --ps-replicas 2: ps 0 killed with -9 fails over with no update lost") {
  const auto r = kill_one_ps("failover-ssp", 0, {"--mode=ssp", "--staleness=2"});
  CHECK(r.pause_s < 2.0);
  CHECK(r.line.lost == 0);
  CHECK(r.lost == 0);
}

TEST_CASE("async, --ps-replicas 2, two trainers per worker process: ps 1 killed with -9, the "
          "pushes every trainer had in flight are sent again and none is lost") {
  const auto r = kill_one_ps("failover-trainers", 1, {"--trainers=2"});
  CHECK(r.line.lost == 0);
  CHECK(r.lost == 0);
}

TEST_CASE("sync, --ps-replicas 2: ps 0 killed with -9 fails over to its backup on ps 1 and the "
          "rounds go on to exactly the last step") {
  const auto r = kill_one_ps("failover-sync", 0, {"--mode=sync"});
  CHECK(r.pause_s < 2.0);
  // A round the lost primary completed alone is owed on its backup and
  // completed there by the pushes sent again.
  CHECK(r.line.lost == 0);
  CHECK(r.lost == 0);
}

TEST_CASE("--ps-replicas 2: a killed ps started again catches up on its shard from the live "
          "copy, so the other ps's death later fails both shards over to it, nothing rolled back") {
  temp_dir dir("failover-catch-up");
  auto args = job;
  args[0] = "--last-step=3000";
  auto c = make_cluster(2, 2, dir, args);
  two_by_two nodes(c, dir);
  auto& [ps0, ps1, chief, w1] = nodes;
  REQUIRE(ps0.wait_for_output("a backup on another ps joined", 60s));
  REQUIRE(w1.wait_for_output(",step:200,", 120s));
  ps1.kill(SIGKILL);
  REQUIRE_MESSAGE(chief.wait_for_output("shard 1 fails over to its backup on ps 0", 30s),
                  chief.output());
  CHECK(ps1.wait(30s) == 128 + SIGKILL);
  process ps1b(c.node("ps", 1), dir / "ps1b.log");
  REQUIRE_MESSAGE(ps1b.wait_for_output("catches up on shard 1 from ps 0", 60s), ps1b.output());
  REQUIRE(ps1b.wait_for_output("keeps the backup of shard 0", 60s));
  REQUIRE(w1.wait_for_output(",step:600,", 120s));
  ps0.kill(SIGKILL);
  REQUIRE_MESSAGE(chief.wait_for_output("shard 0 fails over to its backup on ps 1", 30s),
                  chief.output());
  CHECK(ps0.wait(30s) == 128 + SIGKILL);
  for (auto* p : {&chief, &w1, &ps1b}) {
    CAPTURE(p->output());
    CHECK(p->wait(300s) == 0);
  }
  const auto out = chief.output();
  CAPTURE(out);
  CHECK(out.find("shard 1 fails over to its backup on ps 1") != std::string::npos);
  REQUIRE(final_of(out));
  CHECK(final_of(out)->global_step == 3000);
  CHECK(restored_step(out) == -1);
  CHECK(out.find("rolls back") == std::string::npos);
}

TEST_CASE("--ps-replicas 2 with both ps killed: no copy is left, so every shard rolls back to the "
          "newest checkpoint and the job still ends exactly") {
  temp_dir dir("failover-both");
  auto args = job;
  args[2] = "--save-checkpoint-steps=500";
  auto c = make_cluster(2, 2, dir, args);
  two_by_two nodes(c, dir);
  auto& [ps0, ps1, chief, w1] = nodes;
  REQUIRE(chief.wait_for_output("model.ckpt-500", 120s));
  ps0.kill(SIGKILL);
  ps1.kill(SIGKILL);
  CHECK(ps0.wait(30s) == 128 + SIGKILL);
  CHECK(ps1.wait(30s) == 128 + SIGKILL);
  REQUIRE(chief.wait_for_output("rolls back to the newest checkpoint", 30s));
  process ps0b(c.node("ps", 0), dir / "ps0b.log"), ps1b(c.node("ps", 1), dir / "ps1b.log");
  for (auto* p : {&chief, &w1, &ps0b, &ps1b}) {
    CAPTURE(p->output());
    CHECK(p->wait(300s) == 0);
  }
  const auto out = chief.output();
  CAPTURE(out);
  REQUIRE(final_of(out));
  CHECK(final_of(out)->global_step == 2000);
  CHECK(restored_step(out) >= 500);
  // The restarted ps keep each other's backups again.
  CHECK(ps0b.output().find("a backup on another ps joined") != std::string::npos);
  CHECK(ps1b.output().find("a backup on another ps joined") != std::string::npos);
}

}  // namespace test_failover
