// --ps-replicas 2 across processes: a ps that hangs (SIGSTOP) past
// --node-timeout is failed over as a killed one is; when it goes on again
// (SIGCONT) its primary is stale, so it retires it, becomes the backup of
// the live copy of its shard and of its neighbour's again, and the job ends
// exactly with every node exiting 0 and nothing lost. A hang shorter than
// --node-timeout is no loss at all. In make test-long: the hung-ps cases
// still fail now and then (docs/failure-model.md, "Known").
#include <doctest/doctest.h>

#include <chrono>
#include <csignal>

#include "cluster_procs.hpp"

namespace test_failover_hangs {

using namespace downpour;
using namespace downpour::testing;
using namespace std::chrono_literals;

namespace {

const std::vector<std::string> job = {
    "--last-step=2000",    "--log-every=50",       "--save-checkpoint-steps=100000",
    "--save-checkpoint-secs=0", "--connect-timeout=30", "--ps-replicas=2",
    "--heartbeat-interval=0.25", "--node-timeout=1.5"};

// Every node exits 0; the job ends at exactly its last step, nothing read
// back from a checkpoint and nothing lost. The chief's output.
std::string require_exact_end(two_by_two& nodes) {
  for (auto* p : nodes.all()) {
    CAPTURE(p->output());
    CHECK(p->wait(300s) == 0);
  }
  const auto out = nodes.chief.output();
  CAPTURE(out);
  REQUIRE(final_of(out));
  CHECK(final_of(out)->global_step == 2000);
  CHECK(restored_step(out) == -1);
  CHECK(out.find("rolls back") == std::string::npos);
  CHECK(final_of(out)->updates_applied == 2000);
  CHECK(final_of(out)->updates_lost == 0);
  return out;
}

// Stops ps `victim` until the chief has failed its shard over, then lets it
// go on: it must rejoin as the backup of its shard's live copy.
void hang_one_ps(const std::string& name, int victim) {
  temp_dir dir(name);
  auto c = make_cluster(2, 2, dir, job);
  two_by_two nodes(c, dir);
  process& hung = victim == 0 ? nodes.ps0 : nodes.ps1;
  process& other = victim == 0 ? nodes.ps1 : nodes.ps0;
  REQUIRE(other.wait_for_output("a backup on another ps joined", 60s));
  REQUIRE(hung.wait_for_output("a backup on another ps joined", 60s));
  REQUIRE(nodes.w1.wait_for_output(",step:200,", 120s));
  hung.kill(SIGSTOP);
  const bool resumed = nodes.chief.wait_for_output("training resumes at global step", 30s);
  hung.kill(SIGCONT);
  REQUIRE_MESSAGE(resumed, nodes.chief.output());
  const auto k = std::to_string(victim);
  REQUIRE_MESSAGE(hung.wait_for_output("rejoins as the backup of shard " + k, 60s), hung.output());
  const auto hung_out = hung.output();
  const auto w1_out = nodes.w1.output();
  CAPTURE(hung_out);
  CAPTURE(w1_out);
  const auto out = require_exact_end(nodes);
  CHECK(out.find("shard " + k + " fails over to its backup on ps " + std::to_string(1 - victim)) !=
        std::string::npos);
  CHECK(hung.output().find("keeps the backup of shard " + std::to_string(1 - victim)) !=
        std::string::npos);
}

}  // namespace

TEST_CASE("async, --ps-replicas 2: ps 1 stopped past --node-timeout is failed over, and once "
          "continued it rejoins as its shard's backup; every node exits 0 and nothing is lost") {
  hang_one_ps("hang-ps1", 1);
}

TEST_CASE("async, --ps-replicas 2: ps 0 stopped past --node-timeout is failed over, and once "
          "continued it rejoins as its shard's backup; every node exits 0 and nothing is lost") {
  hang_one_ps("hang-ps0", 0);
}

TEST_CASE("async, --ps-replicas 2: a ps stopped for less than --node-timeout simply goes on, no "
          "failover") {
  temp_dir dir("hang-brief");
  auto c = make_cluster(2, 2, dir, job);
  two_by_two nodes(c, dir);
  REQUIRE(nodes.ps0.wait_for_output("a backup on another ps joined", 60s));
  REQUIRE(nodes.w1.wait_for_output(",step:200,", 120s));
  // Stopped and continued at once: a hang far below --node-timeout.
  nodes.ps1.kill(SIGSTOP);
  nodes.ps1.kill(SIGCONT);
  const auto out = require_exact_end(nodes);
  CHECK(out.find("fails over") == std::string::npos);
}

}  // namespace test_failover_hangs
