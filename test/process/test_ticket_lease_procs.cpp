// Clusters of processes whose workers lease their step tickets four at a
// time (--ticket-lease 4): the job still ends at exactly --last-step, a stop
// at exactly the step its checkpoint holds, through a worker killed with -9
// holding a lease and a ps killed and started again.
#include <doctest/doctest.h>

#include "cluster_procs.hpp"
#include "runtime/files/checkpoint.hpp"
#include "runtime/node/reference_trainer.hpp"
#include "test_jobs.hpp"

namespace test_ticket_lease_procs {

using namespace downpour;
using namespace downpour::testing;
using namespace std::chrono_literals;

TEST_CASE("one ps and one worker process leasing 4 tickets at a time end where the reference "
          "trainer ends, bit for bit") {
  temp_dir dir("lease-oracle-procs");
  auto c = make_cluster(1, 1, dir, {"--last-step=62", "--pipeline=off", "--ticket-lease=4",
                                    "--save-checkpoint-secs=0"});
  process ps0(c.node("ps", 0), dir / "ps.log");
  process w0(c.node("worker", 0, {"--log-level=debug"}), dir / "w.log");
  REQUIRE(w0.wait(120s) == exit_completed);
  REQUIRE(ps0.wait(60s) == exit_completed);
  const auto out = w0.output();
  CAPTURE(out);
  // 62 steps in 16 leases, and one more ask that hears the end.
  CHECK(out.find("stop_supervisor: 17 ticket requests and ") != std::string::npos);
  options o;
  o.last_step = 62;
  std::ostringstream log;
  auto reference = run_reference(o, job_for(o), log);
  CHECK(holds_bits_of(read_checkpoint(dir / "model.ckpt-62"), reference));
}

TEST_CASE("SIGTERM to the chief of a leasing cluster stops every node at one step, its checkpoint "
          "saved; restarted, the job ends at exactly the last step") {
  temp_dir dir("lease-sigterm");
  auto c = make_cluster(2, 2, dir, {"--last-step=100000", "--log-every=20", "--ticket-lease=4",
                                    "--save-checkpoint-secs=0"});
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
  c.common[0] = "--last-step=" + std::to_string(step + 101);
  two_by_two again(c, dir, {}, "b");
  for (auto* p : again.all()) {
    CAPTURE(p->output());
    CHECK(p->wait(120s) == exit_completed);
  }
  CHECK(restored_step(again.chief.output()) == step);
  CHECK(again.chief.output().find("final: global_step=" + std::to_string(step + 101) + " ") !=
        std::string::npos);
}

TEST_CASE("a leasing worker killed with -9 loses none of its tickets: the chief trains on to the "
          "exact last step") {
  temp_dir dir("lease-worker-kill");
  auto c = make_cluster(2, 2, dir, {"--last-step=1500", "--log-every=20", "--ticket-lease=8",
                                    "--save-checkpoint-secs=0"});
  two_by_two nodes(c, dir);
  auto& [ps0, ps1, chief, w1] = nodes;
  REQUIRE(w1.wait_for_output("global_step:", 120s));
  w1.kill(SIGKILL);
  CHECK(w1.wait(30s) == 128 + SIGKILL);
  for (auto* p : {&chief, &ps0, &ps1}) {
    CAPTURE(p->output());
    CHECK(p->wait(300s) == exit_completed);
  }
  CHECK(chief.output().find("final: global_step=1500 ") != std::string::npos);
  CHECK(read_checkpoint(dir / checkpoint_name(1500)).global_step == 1500);
}

TEST_CASE("a ps killed with -9 and started again under leasing workers: the leases start again at "
          "the restored step, the job ends exactly and the updates lost are counted") {
  temp_dir dir("lease-ps-kill");
  auto c = make_cluster(2, 2, dir, {"--last-step=2500", "--log-every=100", "--ticket-lease=4",
                                    "--save-checkpoint-steps=500", "--save-checkpoint-secs=0",
                                    "--connect-timeout=30"});
  two_by_two nodes(c, dir);
  auto& [ps0, ps1, chief, w1] = nodes;
  REQUIRE(chief.wait_for_output("model.ckpt-1000", 120s));
  ps1.kill(SIGKILL);
  REQUIRE(chief.wait_for_output("stop_supervisor: ps 1 went down", 30s));
  CHECK(ps1.wait(30s) == 128 + SIGKILL);
  process ps1b(c.node("ps", 1), dir / "ps1b.log");
  REQUIRE(chief.wait_for_output("training resumes at global step", 60s));
  for (auto* p : {&chief, &w1, &ps0, &ps1b}) {
    CAPTURE(p->output());
    CHECK(p->wait(300s) == exit_completed);
  }
  CHECK(chief.output().find("final: global_step=2500 ") != std::string::npos);
  // Counted through the tallies of leases: the steps rolled back are lost,
  // applied less lost is the last step, the survivor applied every one counted.
  const auto rollbacks = rollback_lines(chief.output());
  REQUIRE(rollbacks.size() == 1);
  const auto fin = final_of(chief.output());
  REQUIRE(fin);
  CHECK(fin->updates_lost == rollbacks[0].reached - rollbacks[0].restored);
  CHECK(fin->updates_applied - fin->updates_lost == 2500);
  CHECK(fin->failover_pause_s > 0.0);
  const auto survivor = rollback_lines(ps0.output());
  REQUIRE(survivor.size() == 1);
  CHECK(rollbacks[0].reached <= survivor[0].reached);
}

}  // namespace test_ticket_lease_procs
