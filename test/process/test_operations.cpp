// Operating a cluster of processes: status, validation metrics, cluster
// identity, a worker killed or hung in async and sync modes.
#include <doctest/doctest.h>

#include <fstream>

#include "cluster_procs.hpp"

namespace test_operations {

using namespace downpour;
using downpour::testing::eval_lines;
using downpour::testing::make_cluster;
using downpour::testing::process;
using downpour::testing::read_text;
using downpour::testing::temp_dir;
using downpour::testing::time_scale;
using namespace std::chrono_literals;

namespace {

}  // namespace

TEST_CASE("status reports the running job and fails clearly when no chief answers") {
  temp_dir dir("status");
  auto c = make_cluster(2, 1, dir, {"--connect-timeout=20", "--last-step=200000", "--log-every=200"});
  process ps0(c.node("ps", 0), dir / "ps0.log");
  process ps1(c.node("ps", 1), dir / "ps1.log");
  process chief(c.node("worker", 0), dir / "w0.log");
  REQUIRE(chief.wait_for_output("global_step:", 60s));
  process status({DOWNPOUR_BINARY, "status", "--chief=" + c.workers}, dir / "status.log");
  CHECK(status.wait(30s) == 0);
  auto out = status.output();
  CAPTURE(out);
  CHECK(out.find("mode: async") != std::string::npos);
  CHECK(out.find("global_step: ") != std::string::npos);
  CHECK(out.find("/200000") != std::string::npos);
  CHECK(out.find("workers: 1 live of 1") != std::string::npos);
  CHECK(out.find("shard 0: [0,198755) floats=198755") != std::string::npos);
  CHECK(out.find("shard 1: [198755,397510) floats=198755") != std::string::npos);
  // One worker between processes: the shards answer its pulls without parameters.
  const auto replayed = out.find("replayed=");
  REQUIRE(replayed != std::string::npos);
  CHECK(std::stoll(out.substr(replayed + 9)) > 100);
  CHECK(out.find("last_checkpoint: ") != std::string::npos);
  chief.kill(SIGKILL);
  ps0.kill(SIGKILL);
  ps1.kill(SIGKILL);
  process nobody({DOWNPOUR_BINARY, "status", "--chief=" + c.workers, "--connect-timeout=0.5"},
                 dir / "nobody.log");
  CHECK(nobody.wait(30s) == 1);
  CHECK(nobody.output().find("cannot reach the chief at " + c.workers + " within 0.5 s") !=
        std::string::npos);
  // Nothing listens there: refused, not a node that did not answer in time.
  CAPTURE(nobody.output());
  CHECK(nobody.output().find("did not answer in time") == std::string::npos);
  CHECK(nobody.output().find("nothing listens on that port (connection refused)") !=
        std::string::npos);
}

TEST_CASE("a local job over tcp listens at the host lists' ports, where status --chief finds it") {
  temp_dir dir("local-tcp-status");
  auto c = make_cluster(2, 1, dir, {});
  process job({DOWNPOUR_BINARY, "--transport=tcp", "--ps-hosts=" + c.ps,
               "--worker-hosts=" + c.workers, "--last-step=200000", "--log-every=200",
               "--save-checkpoint-secs=0", "--checkpoint-dir=" + dir.str()},
              dir / "job.log");
  REQUIRE(job.wait_for_output("global_step:", 60s));
  CHECK(job.output().find("listening as ps 1 on " + c.ps.substr(c.ps.find(',') + 1)) !=
        std::string::npos);
  process status({DOWNPOUR_BINARY, "status", "--chief=" + c.workers, "--connect-timeout=30"},
                 dir / "status.log");
  CAPTURE(status.output());
  CHECK(status.wait(60s) == 0);
  CHECK(status.output().find("workers: 1 live of 1") != std::string::npos);
  job.kill(SIGTERM);
  CHECK(job.wait(60s) == 4);
}

TEST_CASE("eval-every adds validation accuracies to the log and to metrics.csv") {
  temp_dir dir("eval-every");
  process p({DOWNPOUR_BINARY, "--last-step=1200", "--eval-every=200", "--quiet",
             "--checkpoint-dir=" + dir.str()},
            dir / "p.log");
  REQUIRE(p.wait(120s) == 0);
  // An evaluation whose step the shards passed before the evaluator asked
  // for it is skipped (it asks for the next one before computing this one,
  // so only a thread starved for a whole interval sees that happen).
  const auto evals = eval_lines(p.output());
  REQUIRE_FALSE(evals.empty());
  for (const auto& e : evals) {
    CHECK(e.global_step % 200 == 0);
    CHECK(e.global_step <= 1200);
    CHECK(e.val_accuracy > 0.6);
  }
  auto csv = read_text(dir / "metrics.csv");
  CHECK(csv.rfind("wall_s,global_step,loss,learning_rate,steps_per_s,val_accuracy,"
                  "ema_val_accuracy\n", 0) == 0);
  CHECK(csv.find("," + std::to_string(evals.front().global_step) + ",") != std::string::npos);
}

TEST_CASE("a node of another cluster is refused with a message naming the reason") {
  temp_dir dir("cluster-name");
  auto c = make_cluster(1, 1, dir, {"--connect-timeout=20", "--last-step=100"});
  process ps0(c.node("ps", 0, {"--cluster-name=blue"}), dir / "ps.log");
  process w0(c.node("worker", 0, {"--cluster-name=green"}), dir / "w.log");
  CHECK(w0.wait(60s) == 1);
  CHECK(w0.output().find("refused ps 0 at " + c.ps + ": it belongs to another cluster") !=
        std::string::npos);
  CAPTURE(w0.output());
}

// DOWNPOUR_TEST_HANDSHAKE_VERSION stands in for the version in the handshake
// only (runtime/node/node.cpp): the node is this binary, built from another commit
// as far as its peers can tell.
TEST_CASE("a node of another version is refused with a message naming the reason, and the "
          "cluster it knocked at trains on") {
  temp_dir dir("version");
  auto c = make_cluster(1, 1, dir, {"--connect-timeout=20", "--last-step=100"});
  process ps0(c.node("ps", 0), dir / "ps.log");
  auto other = c.node("worker", 0);
  other.insert(other.begin(), {"/usr/bin/env", "DOWNPOUR_TEST_HANDSHAKE_VERSION=0.0.0+0000000"});
  process stranger(other, dir / "stranger.log");
  CHECK(stranger.wait(60s) == 1);
  CAPTURE(stranger.output());
  CHECK(stranger.output().find("refused ps 0 at " + c.ps + ": it belongs to another cluster "
                               "(--cluster-name) or Downpour version") != std::string::npos);
  process chief(c.node("worker", 0), dir / "w.log");
  for (auto* p : {&chief, &ps0}) {
    CAPTURE(p->output());
    CHECK(p->wait(120s) == 0);
  }
  CHECK(chief.output().find("final: global_step=100 ") != std::string::npos);
}

TEST_CASE("an async worker killed with -9 leaves the others going, rejoins, and the job ends exactly") {
  temp_dir dir("async-kill");
  // Long enough for the restarted worker to rejoin a running job. An
  // instrumented build steps about time_scale() times slower (more, under
  // load: 6000 steps took 21 minutes), so fewer steps last as long there.
  const auto last_step = std::to_string(static_cast<long>(6000 / time_scale()));
  auto c = make_cluster(1, 2, dir,
                        {"--connect-timeout=20", "--last-step=" + last_step, "--log-every=100"});
  process ps0(c.node("ps", 0), dir / "ps.log");
  process chief(c.node("worker", 0), dir / "w0.log");
  auto w1 = std::make_unique<process>(c.node("worker", 1), dir / "w1.log");
  REQUIRE(w1->wait_for_output("global_step:", 60s));
  w1->kill(SIGKILL);
  CHECK(w1->wait(30s) == 128 + SIGKILL);
  process w1b(c.node("worker", 1), dir / "w1b.log");
  CHECK(w1b.wait_for_output("global_step:", 60s));
  for (auto* p : {&chief, &w1b, &ps0}) {
    CAPTURE(p->output());
    CHECK(p->wait(300s) == 0);
  }
  CHECK(chief.output().find("final: global_step=" + last_step + " ") != std::string::npos);
}

TEST_CASE("a hung sync worker (SIGSTOP) is detected by heartbeats and the job goes on") {
  temp_dir dir("hung");
  auto c = make_cluster(1, 3, dir,
                        {"--connect-timeout=20", "--mode=sync", "--last-step=1500", "--log-every=50",
                         "--heartbeat-interval=0.2", "--node-timeout=1.5"});
  process ps0(c.node("ps", 0), dir / "ps.log");
  process chief(c.node("worker", 0), dir / "w0.log");
  process w1(c.node("worker", 1), dir / "w1.log");
  process w2(c.node("worker", 2), dir / "w2.log");
  REQUIRE(w2.wait_for_output("global_step:", 60s));
  auto stopped = std::chrono::steady_clock::now();
  w2.kill(SIGSTOP);
  REQUIRE(chief.wait_for_output("a round now needs 2 gradients (2 live workers)", 30s));
  auto detected = std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped).count();
  MESSAGE("hung worker detected after " << detected << " s (node timeout 1.5 s)");
  // Silence for --node-timeout, noticed at a heartbeat tick; a loaded machine adds its delay.
  CHECK(detected < 1.5 + 2 * 0.2 + 0.5 * time_scale());
  for (auto* p : {&chief, &w1, &ps0}) {
    CAPTURE(p->output());
    CHECK(p->wait(300s) == 0);
  }
  CHECK(chief.output().find("final: global_step=1500 ") != std::string::npos);
  w2.kill(SIGKILL);
}

}  // namespace test_operations
