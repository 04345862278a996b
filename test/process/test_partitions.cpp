// Network partitions, not just kills: 2 ps and 2 workers as processes on four
// hosts (network namespaces on a bridge, test/support/netns.hpp); one host's link is
// cut for a few seconds during the job and restored. The node is alive all
// the while, so only heartbeats can tell: the loss must be seen within
// --node-timeout, handled as a kill of that node would be, and the job must
// still end at exactly --last-step having lost no more than docs/failure-model.md's rule
// (the steps since the newest checkpoint for a ps or the chief, none for a
// worker). Skipped (exit 77) where namespaces cannot be made.
#include <doctest/doctest.h>

#include <array>
#include <iostream>
#include <memory>
#include <thread>

#include "cluster_procs.hpp"
#include "netns.hpp"
#include "runtime/net/connect_guard.hpp"

namespace test_partitions {

using namespace downpour;
using namespace downpour::testing;
using namespace std::chrono_literals;

namespace {

// How long a link stays cut: the fault itself, not a wait for any node.
constexpr auto link_down = 3s;
constexpr double heartbeat_s = 0.25;
constexpr double node_timeout_s = 1.5;

enum host : std::size_t { ps0, ps1, chief, worker1 };

std::unique_ptr<partition_net> network_or_skip() {
  std::string why;
  auto net = partition_net::make(4, why);
  if (!net) {
    std::cout << "test_partitions: skipped: " << why << std::endl;
    std::exit(77);  // ctest's SKIP_RETURN_CODE for this test (CMakeLists.txt)
  }
  return net;
}

struct partitioned_cluster {
  temp_dir dir{"partition"};
  std::unique_ptr<partition_net> net = network_or_skip();
  std::array<std::unique_ptr<process>, 4> nodes;
  std::chrono::steady_clock::time_point healed;
  std::string chief_log_at_loss;  // before any recovery: the link was still cut

  explicit partitioned_cluster(int connect_timeout_s = 30) {
    // Every node has a namespace, and so a port space, of its own: a fixed
    // port cannot collide with another test or run.
    auto at = [&](std::size_t k) { return net->address(k) + ":7070"; };
    cluster_args c{port_reservation(0), at(ps0) + "," + at(ps1),  // own port space: none to reserve
                   at(chief) + "," + at(worker1), dir.str(), {}};
    c.common = {"--last-step=3000", "--log-every=10", "--save-checkpoint-steps=500",
                "--save-checkpoint-secs=0", "--connect-timeout=" + std::to_string(connect_timeout_s),
                "--heartbeat-interval=" + std::to_string(heartbeat_s),
                "--node-timeout=" + std::to_string(node_timeout_s)};
    const std::array<std::pair<const char*, int>, 4> roles = {
        {{"ps", 0}, {"ps", 1}, {"worker", 0}, {"worker", 1}}};
    for (std::size_t k : {ps0, ps1, worker1, chief})
      nodes[k] = std::make_unique<process>(
          net->on_host(k, c.node(roles[k].first, roles[k].second)),
          dir / ("node" + std::to_string(k) + ".log"));
  }

  process& operator[](host k) { return *nodes[k]; }

  // Cuts host k's link and waits until observer logs `seen`; keeps the link
  // cut for link_down in all, then restores it. The seconds from the cut to
  // the loss being seen.
  double partition(host k, host observer, const std::string& seen) {
    const auto cut = std::chrono::steady_clock::now();
    net->cut(k);
    const bool detected = (*this)[observer].wait_for_output(seen, 30s);
    const double after = seconds_since(cut);
    chief_log_at_loss = (*this)[chief].output();
    std::this_thread::sleep_until(cut + link_down);
    net->heal(k);
    healed = std::chrono::steady_clock::now();
    REQUIRE_MESSAGE(detected, "never logged: " << seen);
    MESSAGE("host " << k << " cut: seen by host " << observer << " after " << after
                    << " s (node timeout " << node_timeout_s << " s)");
    return after;
  }

  // Every node exits 0 and the job ends at exactly its last step.
  void require_clean_end() {
    for (auto k : {chief, worker1, ps0, ps1}) {
      CAPTURE(nodes[k]->output());
      CHECK(nodes[k]->wait(300s) == 0);
    }
    CHECK((*this)[chief].output().find("final: global_step=3000 ") != std::string::npos);
  }
};

// Heartbeats close a connection silent for --node-timeout; they are checked
// every --heartbeat-interval, and a loaded machine adds its delay.
void check_within_node_timeout(double detected) {
  CHECK(detected >= node_timeout_s - 2 * heartbeat_s);
  CHECK(detected <= node_timeout_s + 2 * heartbeat_s + 0.5 * time_scale());
}

// A ps or the chief cut off, the loss seen by observer: once the link is
// back, the chief restores every shard to the newest checkpoint saved before
// the cut, and the job ends exactly.
void check_cut_rolls_back(host cut, host observer, const std::string& seen) {
  partitioned_cluster cluster;
  REQUIRE(cluster[chief].wait_for_output("model.ckpt-1000", 120s));
  check_within_node_timeout(cluster.partition(cut, observer, seen));
  const bool resumed = cluster[chief].wait_for_output("training resumes at global step", 60s);
  if (!resumed)
    for (auto k : {chief, worker1, ps0, ps1}) MESSAGE("host " << k << ":\n" << cluster[k].output());
  REQUIRE(resumed);
  MESSAGE("training resumed " << seconds_since(cluster.healed) << " s after the link was back");
  cluster.require_clean_end();
  const auto& before = cluster.chief_log_at_loss;
  const auto step = restored_step(cluster[chief].output().substr(before.size()));
  CHECK(step >= 500);
  CHECK(step == newest_saved_step(before));
  const auto rolled = "restored to global step " + std::to_string(step);
  CHECK(cluster[ps0].output().find(rolled) != std::string::npos);
  CHECK(cluster[ps1].output().find(rolled) != std::string::npos);
}

}  // namespace

TEST_CASE("a ps cut off for a few seconds is seen within --node-timeout, every shard rolls back "
          "to the newest checkpoint when it is back, and the job ends exactly") {
  check_cut_rolls_back(ps1, chief, "stop_supervisor: ps 1 went down");
}

TEST_CASE("the chief cut off for a few seconds loses its peers within --node-timeout, restores "
          "the newest checkpoint into the live shards when it is back, and the job ends exactly") {
  check_cut_rolls_back(chief, worker1, "joining again");
}

TEST_CASE("a worker cut off for a few seconds is dropped within --node-timeout and rejoins; "
          "nothing is rolled back and the job ends exactly") {
  partitioned_cluster cluster;
  REQUIRE(cluster[chief].wait_for_output("model.ckpt-1000", 120s));
  const double detected =
      cluster.partition(worker1, chief, "sync_coordinator: worker 1 is gone");
  check_within_node_timeout(detected);
  REQUIRE(cluster[worker1].wait_for_output("joining again", 10s));
  cluster.require_clean_end();
  const auto w1 = cluster[worker1].output();
  // Trained again: a line every 10 local steps (it may rejoin shortly before the end).
  CHECK(w1.find("global_step:", w1.find("joining again")) != std::string::npos);
  CHECK(cluster[chief].output().find("checkpoint: restored") == std::string::npos);
  for (auto k : {ps0, ps1}) {  // once, at the start
    const auto log = cluster[k].output();
    const auto first = log.find("restored to global step 0");
    CHECK(first != std::string::npos);
    CHECK(log.find("restored to global step", first + 1) == std::string::npos);
  }
}

// CAF connects with a blocking connect(); to a host that is cut off it blocked
// for the kernel's SYN retries (minutes), and the nodes could not exit until
// it returned (runtime/net/connect_guard.hpp).
TEST_CASE("a ps cut off for longer than --connect-timeout ends the chief, the other ps and the "
          "workers non-zero in time, each naming it") {
  constexpr int connect_timeout_s = 3;
  partitioned_cluster cluster(connect_timeout_s);
  const bool saved = cluster[chief].wait_for_output("model.ckpt-500", 120s);
  CAPTURE(cluster[chief].output());
  REQUIRE(saved);
  cluster.net->cut(ps1);  // for as long as the others take to give up
  REQUIRE(cluster[chief].wait_for_output("stop_supervisor: ps 1 went down", 30s));
  const auto lost = std::chrono::steady_clock::now();
  const std::string named = "ps 1 at " + cluster.net->address(ps1) + ":7070";
  const double bound = connect_timeout_s + std::chrono::duration<double>(connect_attempt_bound).count() +
                       2.0 * time_scale();
  for (auto k : {chief, worker1, ps0}) {
    CAPTURE(cluster[k].output());
    CHECK(cluster[k].wait(60s) == 1);
    const double ended = seconds_since(lost);
    MESSAGE("host " << k << " exited " << ended << " s after the ps was lost");
    CHECK(ended < bound);
    CHECK(cluster[k].output().find(named) != std::string::npos);
  }
  CHECK(cluster[chief].output().find(named + " did not come back within 3 s") != std::string::npos);
  cluster.net->heal(ps1);
  // The cut-off ps lost its chief too: it gives up on it after
  // --connect-timeout, as a ps whose chief never comes back does.
  CAPTURE(cluster[ps1].output());
  CHECK(cluster[ps1].wait(60s) == 1);
  CHECK(cluster[ps1].output().find("did not come back within 3 s") != std::string::npos);
}

TEST_CASE("a TF_CONFIG cluster whose host names resolve only after its nodes started listens on "
          "every interface, keeps resolving until it reaches its peers, and trains") {
  temp_dir dir("tf-config-names");
  auto net = network_or_skip();
  // Kubernetes' names, as the training operator writes them into TF_CONFIG.
  const std::array<std::string, 3> names = {"job-ps-0.ns.svc", "job-chief-0.ns.svc",
                                            "job-worker-0.ns.svc"};
  const std::string tf_cluster = R"({"cluster": {"ps": [")" + names[0] + R"(:7070"], "chief": [")" +
                                 names[1] + R"(:7070"], "worker": [")" + names[2] + R"(:7070"]})";
  const std::array<std::string, 3> tasks = {R"("task": {"type": "ps", "index": 0}})",
                                            R"("task": {"type": "chief", "index": 0}})",
                                            R"("task": {"type": "worker", "index": 0}})"};
  for (std::size_t k = 0; k < 3; ++k) net->write_hosts(k, "127.0.0.1 localhost\n");
  std::vector<std::unique_ptr<process>> nodes;
  for (std::size_t k = 0; k < 3; ++k)
    nodes.push_back(std::make_unique<process>(
        net->on_host(k, {"/usr/bin/env", "TF_CONFIG=" + tf_cluster + ", " + tasks[k],
                         DOWNPOUR_BINARY, "--last-step=60", "--quiet", "--log-level=debug",
                         "--save-checkpoint-secs=0", "--checkpoint-dir=" + dir.str()}),
        dir / ("node" + std::to_string(k) + ".log")));
  // The ps listens although its own name does not resolve, and the workers
  // have tried the ps's name in vain; then the names appear in every host's file.
  REQUIRE(nodes[0]->wait_for_output("listening as ps 0 on every interface, port 7070", 60s));
  for (std::size_t k : {1, 2})
    REQUIRE(nodes[k]->wait_for_output("cannot reach ps 0 at " + names[0] + ":7070 yet", 60s));
  std::string hosts = "127.0.0.1 localhost\n";
  for (std::size_t k = 0; k < 3; ++k) hosts += net->address(k) + " " + names[k] + "\n";
  for (std::size_t k = 0; k < 3; ++k) net->write_hosts(k, hosts);
  for (auto& node : nodes) {
    CAPTURE(node->output());
    CHECK(node->wait(120s) == 0);
  }
  CHECK(nodes[1]->output().find("final: global_step=60 ") != std::string::npos);
  const auto chief_log = nodes[1]->output();
  const auto connected = chief_log.find("connected to ps 0");
  REQUIRE(connected != std::string::npos);
  const auto line_end = chief_log.find('\n', connected);
  MESSAGE("the chief: " << chief_log.substr(connected, line_end - connected));
}

}  // namespace test_partitions
