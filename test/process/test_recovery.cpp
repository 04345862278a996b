// Recovery of a cluster of processes: a parameter server or the chief killed
// with -9 and started again; the job rolls back to the newest checkpoint and
// still ends at exactly --last-step with every process exiting 0.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>

#include "cluster_procs.hpp"

namespace test_recovery {

using namespace downpour;
using namespace downpour::testing;
using namespace std::chrono_literals;

namespace {

const std::vector<std::string> job = {"--last-step=2500", "--log-every=100",
                                      "--save-checkpoint-steps=500", "--save-checkpoint-secs=0",
                                      "--connect-timeout=30"};

}  // namespace

TEST_CASE("a ps killed with -9 and started again: every shard rolls back to the newest checkpoint "
          "and the job ends exactly") {
  temp_dir dir("ps-kill");
  auto c = make_cluster(2, 2, dir, job);
  two_by_two nodes(c, dir);
  auto& [ps0, ps1, chief, w1] = nodes;
  REQUIRE(chief.wait_for_output("model.ckpt-1000", 120s));
  auto killed = std::chrono::steady_clock::now();
  ps1.kill(SIGKILL);
  REQUIRE(w1.wait_for_output("joining again", 30s));
  const double worker_saw = seconds_since(killed);
  REQUIRE(chief.wait_for_output("stop_supervisor: ps 1 went down", 30s));
  const double detected = seconds_since(killed);
  CHECK(ps1.wait(30s) == 128 + SIGKILL);
  const auto before_restart = chief.output();
  auto restarted = std::chrono::steady_clock::now();
  process ps1b(c.node("ps", 1), dir / "ps1b.log");
  REQUIRE(chief.wait_for_output("training resumes at global step", 60s));
  const double recovered = seconds_since(restarted);
  MESSAGE("ps loss seen by worker 1 within " << worker_saw << " s, by the chief within "
                                               << detected << " s; training resumed " << recovered
                                               << " s after the ps was started again");
  CHECK(worker_saw < 1.0);
  CHECK(detected < 1.0);
  for (auto* p : {&chief, &w1, &ps0, &ps1b}) {
    CAPTURE(p->output());
    CHECK(p->wait(300s) == 0);
  }
  const auto out = chief.output();
  CHECK(out.find("final: global_step=2500 ") != std::string::npos);
  // The restore used the newest checkpoint saved before the loss, and both
  // shards rolled back to it.
  const auto restore_log = out.substr(out.find("ps 1 went down"));
  const auto step = restored_step(restore_log);
  CHECK(step >= 1000);
  CHECK(step == newest_saved_step(before_restart));
  const auto rolled = "restored to global step " + std::to_string(step);
  CHECK(ps0.output().find(rolled) != std::string::npos);
  CHECK(ps1b.output().find(rolled) != std::string::npos);
  // Exactly counted: the steps rolled back are lost, applied - lost is the
  // last step, and the pause lasted no longer than the ps was away.
  std::ifstream in(dir / "summary.json");
  const std::string summary((std::istreambuf_iterator<char>(in)), {});
  const auto applied = std::stoll(summary_field(summary, "updates_applied"));
  const auto lost = std::stoll(summary_field(summary, "updates_lost"));
  const double pause = std::stod(summary_field(summary, "failover_pause_s"));
  MESSAGE("updates applied " << applied << ", lost " << lost << ", paused " << pause << " s");
  CHECK(applied - lost == 2500);
  // Every step a progress line had reached before the kill was rolled back
  // (less the pushes in flight then, at most one per worker).
  CHECK(lost >= newest_progress_step(before_restart) - step - 2);
  CHECK(lost <= 2500 - step);
  CHECK(pause > 0.0);
  CHECK(pause <= seconds_since(killed));
  CHECK(out.find(" updates_applied=" + std::to_string(applied) + " updates_lost=" +
                 std::to_string(lost) + " failover_pause_s=") != std::string::npos);
}

TEST_CASE("the chief killed with -9 and started again restores into the live shards; the other "
          "worker waits and rejoins") {
  temp_dir dir("chief-kill");
  auto c = make_cluster(2, 2, dir, job);
  two_by_two nodes(c, dir);
  auto& [ps0, ps1, chief, w1] = nodes;
  REQUIRE(chief.wait_for_output("model.ckpt-1000", 120s));
  auto killed = std::chrono::steady_clock::now();
  chief.kill(SIGKILL);
  REQUIRE(w1.wait_for_output("joining again", 30s));
  const double detected = seconds_since(killed);
  CHECK(chief.wait(30s) == 128 + SIGKILL);
  const auto saved = newest_saved_step(chief.output());
  auto restarted = std::chrono::steady_clock::now();
  process chief2(c.node("worker", 0), dir / "w0b.log");
  REQUIRE(chief2.wait_for_output("checkpoint: restored", 60s));
  const double restored = seconds_since(restarted);
  MESSAGE("chief loss seen by worker 1 after " << detected << " s; the new chief restored "
                                               << restored << " s after it was started");
  CHECK(detected < 1.0);
  for (auto* p : {&chief2, &w1, &ps0, &ps1}) {
    CAPTURE(p->output());
    CHECK(p->wait(300s) == 0);
  }
  CHECK(chief2.output().find("final: global_step=2500 ") != std::string::npos);
  const auto step = restored_step(chief2.output());
  CHECK(step >= 1000);
  CHECK(step == saved);
  const auto rolled = "restored to global step " + std::to_string(step);
  CHECK(ps0.output().find(rolled) != std::string::npos);
  CHECK(ps1.output().find(rolled) != std::string::npos);
}

TEST_CASE("a ps that does not come back within --connect-timeout ends every node non-zero, "
          "naming it, and nothing more is saved") {
  temp_dir dir("ps-gone");
  auto args = job;
  args.pop_back();  // --connect-timeout: 2 s for the workers; a ps must outwait the chief's start
  auto c = make_cluster(2, 2, dir, args);
  process ps0(c.node("ps", 0, {"--connect-timeout=30"}), dir / "ps0.log");
  process ps1(c.node("ps", 1, {"--connect-timeout=30"}), dir / "ps1.log");
  process chief(c.node("worker", 0, {"--connect-timeout=2"}), dir / "w0.log");
  process w1(c.node("worker", 1, {"--connect-timeout=2"}), dir / "w1.log");
  REQUIRE(chief.wait_for_output("model.ckpt-500", 120s));
  ps1.kill(SIGKILL);
  const std::string named = "ps 1 at 127.0.0.1:" + c.ps.substr(c.ps.rfind(':') + 1);
  CHECK(chief.wait(60s) == 1);
  CHECK(w1.wait(60s) == 1);
  CHECK(ps0.wait(60s) == 1);
  const auto out = chief.output();
  CAPTURE(out);
  CHECK(out.find(named + " did not come back within 2 s") != std::string::npos);
  {
    CAPTURE(w1.output());
    CHECK(w1.output().find("cannot reach " + named + " within 2 s") != std::string::npos);
  }
  {
    CAPTURE(ps0.output());
    CHECK(ps0.output().find(named + " did not come back") != std::string::npos);
  }
  const auto after = out.substr(out.find("ps 1 went down"));
  CHECK(after.find("checkpoint: saved") == std::string::npos);
  // Each node says why it ends once.
  CHECK(error_lines(out) == 1);
  CHECK(error_lines(w1.output()) == 1);
  CHECK(error_lines(ps0.output()) == 1);
}

TEST_CASE("sync mode: a ps killed with -9 and started again rolls every shard back and the job "
          "ends exactly") {
  temp_dir dir("sync-ps-kill");
  auto c = make_cluster(2, 2, dir,
                        {"--mode=sync", "--last-step=900", "--log-every=50",
                         "--save-checkpoint-steps=300", "--save-checkpoint-secs=0",
                         "--connect-timeout=30"});
  two_by_two nodes(c, dir);
  auto& [ps0, ps1, chief, w1] = nodes;
  REQUIRE(chief.wait_for_output("model.ckpt-300", 120s));
  ps1.kill(SIGKILL);
  REQUIRE(chief.wait_for_output("stop_supervisor: ps 1 went down", 30s));
  CHECK(ps1.wait(30s) == 128 + SIGKILL);
  const auto before_restart = chief.output();
  process ps1b(c.node("ps", 1), dir / "ps1b.log");
  for (auto* p : {&chief, &w1, &ps0, &ps1b}) {
    CAPTURE(p->output());
    CHECK(p->wait(300s) == 0);
  }
  const auto out = chief.output();
  CHECK(out.find("final: global_step=900 ") != std::string::npos);
  const auto step = restored_step(out.substr(out.find("ps 1 went down")));
  CHECK(step >= 300);
  CHECK(step == newest_saved_step(before_restart));
}

TEST_CASE("a whole cluster of processes killed with -9 and started again resumes at exactly the "
          "newest saved step and ends exactly") {
  temp_dir dir("all-kill");
  auto c = make_cluster(2, 2, dir, job);
  std::int64_t logged = -1;
  {
    two_by_two first(c, dir);
    REQUIRE(first.chief.wait_for_output("model.ckpt-1000", 120s));
    for (auto* p : first.all()) p->kill(SIGKILL);
    for (auto* p : first.all()) CHECK(p->wait(30s) == 128 + SIGKILL);
    logged = newest_saved_step(first.chief.output());
  }
  // A file gets its final name only once complete (written, synced, renamed):
  // the newest name is the newest saved step, even one saved just before the
  // kill and never logged.
  std::int64_t saved = -1;
  for (const auto& f : std::filesystem::directory_iterator(dir.str())) {
    const auto name = f.path().filename().string();
    if (name.rfind("model.ckpt-", 0) == 0 && name.find_first_not_of("0123456789", 11) == std::string::npos)
      saved = std::max<std::int64_t>(saved, std::stoll(name.substr(11)));
  }
  two_by_two again(c, dir, {}, "b");
  auto& [ps0, ps1, chief, w1] = again;
  for (auto* p : again.all()) {
    CAPTURE(p->output());
    CHECK(p->wait(300s) == 0);
  }
  const auto out = chief.output();
  CHECK(out.find("final: global_step=2500 ") != std::string::npos);
  CHECK(logged >= 1000);
  CHECK(saved >= logged);
  CHECK(restored_step(out) == saved);
  const auto rolled = "restored to global step " + std::to_string(saved);
  CHECK(ps0.output().find(rolled) != std::string::npos);
  CHECK(ps1.output().find(rolled) != std::string::npos);
}

}  // namespace test_recovery
