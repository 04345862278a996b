// --trainers 2 as processes: a dense job of one ps and one worker process
// ends at exactly its last step; a SIGTERM to the chief stops every node with
// a checkpoint and the same command resumes at that step; a worker process
// killed with its two trainers lowers sync's round by two, and started
// again it raises it by two, the job ending at exactly its last step.
#include <doctest/doctest.h>

#include <memory>

#include "cluster_procs.hpp"
#include "runtime/files/checkpoint.hpp"
#include "runtime/node/signals.hpp"
#include "runtime/net/ports.hpp"

namespace test_trainer_procs {

using namespace downpour;
using namespace downpour::testing;
using namespace std::chrono_literals;

TEST_CASE("SIGTERM to the chief of a cluster of two trainers per worker process stops every node "
          "with exit 4; restarted, it resumes at the stop step") {
  temp_dir dir("trainers-sigterm");
  auto c = make_cluster(2, 2, dir, {"--last-step=100000", "--log-every=20",
                                    "--save-checkpoint-secs=0", "--trainers=2"});
  two_by_two nodes(c, dir);
  auto& [ps0, ps1, chief, w1] = nodes;
  REQUIRE(w1.wait_for_output("global_step:", 120s));
  chief.kill(SIGTERM);
  for (auto* p : nodes.all()) {
    CAPTURE(p->output());
    CHECK(p->wait(60s) == exit_stopped);
  }
  const auto step = stopped_step(chief.output());
  REQUIRE(step > 0);
  CHECK(read_checkpoint(dir / checkpoint_name(step)).global_step == step);
  c.common[0] = "--last-step=" + std::to_string(step + 200);
  process ps0b(c.node("ps", 0), dir / "ps0b.log");
  process ps1b(c.node("ps", 1), dir / "ps1b.log");
  process w1b(c.node("worker", 1), dir / "w1b.log");
  process again(c.node("worker", 0), dir / "again.log");
  CHECK(again.wait(300s) == exit_completed);
  const auto out = again.output();
  CAPTURE(out);
  CHECK(restored_step(out) == step);
  CHECK(out.find("final: global_step=" + std::to_string(step + 200) + " ") != std::string::npos);
  for (auto* p : {&w1b, &ps0b, &ps1b}) CHECK(p->wait(120s) == exit_completed);
}

// One ps holds the whole model, so a push batch of more gradients than
// trainers was over every node's message bound: the ps closed the
// connection again and again and the job never ended.
TEST_CASE("a dense async job of two trainers in one worker process and one ps ends at exactly "
          "its last step") {
  temp_dir dir("trainers-dense");
  auto c = make_cluster(1, 1, dir, {"--last-step=300", "--log-every=100", "--trainers=2",
                                    "--connect-timeout=30"});
  process ps(c.node("ps", 0), dir / "ps.log");
  process chief(c.node("worker", 0), dir / "w0.log");
  for (auto* p : {&chief, &ps}) {
    CHECK(p->wait(120s) == 0);
    CAPTURE(p->output());
    CHECK(p->output().find("refused a message") == std::string::npos);
  }
  CHECK(chief.output().find("final: global_step=300 ") != std::string::npos);
}

TEST_CASE("a sync job of two trainers per worker process goes on when one process is killed and "
          "counts both its trainers back when it returns") {
  temp_dir dir("trainers-kill");
  const port_reservation ports(4);
  auto ps = "127.0.0.1:" + std::to_string(ports[0]);
  std::string workers;
  for (int w = 1; w <= 3; ++w)
    workers += (w > 1 ? "," : "") + std::string("127.0.0.1:") + std::to_string(ports[w]);
  auto node = [&](const std::string& role, int task) {
    return std::vector<std::string>{
        DOWNPOUR_BINARY,         "--role=" + role,       "--task=" + std::to_string(task),
        "--ps-hosts=" + ps,      "--worker-hosts=" + workers, "--mode=sync",
        "--trainers=2",          "--last-step=1500",     "--log-every=50",
        "--quiet",               "--checkpoint-dir=" + dir.str(), "--connect-timeout=20"};
  };
  process ps0(node("ps", 0), dir / "ps.log");
  process chief(node("worker", 0), dir / "w0.log");
  process w1(node("worker", 1), dir / "w1.log");
  auto w2 = std::make_unique<process>(node("worker", 2), dir / "w2.log");
  REQUIRE(w2->wait_for_output("global_step:", 60s));
  w2->kill(SIGKILL);
  REQUIRE(chief.wait_for_output("a round now needs 4 gradients (4 live workers)", 30s));
  CHECK(w2->wait(30s) == 128 + SIGKILL);
  auto w2b = std::make_unique<process>(node("worker", 2), dir / "w2b.log");
  CHECK(chief.wait_for_output("a round now needs 6 gradients (6 live workers)", 60s));
  for (auto* p : {&chief, &w1, w2b.get(), &ps0}) {
    CAPTURE(p->output());
    CHECK(p->wait(300s) == 0);
  }
  CHECK(chief.output().find("final: global_step=1500 ") != std::string::npos);
}

}  // namespace test_trainer_procs
