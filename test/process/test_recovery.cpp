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

// Exactly counted, from the logs: the steps every shard had applied when the
// chief restored them, less the checkpoint's (`restored`), are lost; the
// updates applied (the lost ones too) less the lost are the last step. The
// pause, from the loss to the first step after the restore, is within the
// time the test waited.
final_line_values check_counted(const std::string& out, const std::string& ps0_out,
                                std::int64_t restored, std::int64_t last_step, double within_s) {
  const auto chief_rollbacks = rollback_lines(out);
  REQUIRE(chief_rollbacks.size() == 1);
  const auto reached = chief_rollbacks[0].reached;
  CHECK(chief_rollbacks[0].restored == restored);
  const auto fin = final_of(out);
  REQUIRE(fin);
  MESSAGE("reached " << reached << ", restored " << restored << "; updates applied "
                     << fin->updates_applied << ", lost " << fin->updates_lost << ", paused "
                     << fin->failover_pause_s << " s");
  CHECK(fin->updates_lost == reached - restored);
  CHECK(fin->updates_applied - fin->updates_lost == last_step);
  CHECK(fin->updates_applied == last_step + reached - restored);
  // Every update counted reached the surviving shard, which may have taken
  // the pushes in flight at the kill besides (one per worker, and one more
  // pipelined).
  const auto ps0_rollbacks = rollback_lines(ps0_out);
  REQUIRE(ps0_rollbacks.size() == 1);
  CHECK(reached <= ps0_rollbacks[0].reached);
  CHECK(reached >= ps0_rollbacks[0].reached - 4);
  CHECK(reached >= restored);
  CHECK(fin->failover_pause_s > 0.0);
  CHECK(fin->failover_pause_s < within_s);
  return *fin;
}

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
  const auto fin = check_counted(out, ps0.output(), step, 2500, seconds_since(killed));
  std::ifstream in(dir / "summary.json");
  const std::string summary((std::istreambuf_iterator<char>(in)), {});
  CHECK(summary_field(summary, "updates_applied") == std::to_string(fin.updates_applied));
  CHECK(summary_field(summary, "updates_lost") == std::to_string(fin.updates_lost));
  CHECK(std::stod(summary_field(summary, "failover_pause_s")) ==
        doctest::Approx(fin.failover_pause_s).epsilon(0.01));
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
  const auto killed = std::chrono::steady_clock::now();
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
  check_counted(out, ps0.output(), step, 900, seconds_since(killed));
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
