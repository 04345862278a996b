// --ps-replicas 2 across processes, one worker, no pipelining: the job is
// deterministic, so a failover that loses nothing ends on the very bits of
// a job without one. A ps killed with -9 mid-job: the pushes its primary
// took alone or never saw are sent again by the worker's node and taken
// where they are owed, and the final checkpoint equals the single-process
// reference (dense) or the same cluster left alone (sparse rows).
#include <doctest/doctest.h>

#include <csignal>

#include "cluster_procs.hpp"
#include "runtime/files/checkpoint.hpp"
#include "runtime/node/reference_trainer.hpp"
#include "test_jobs.hpp"

namespace test_failover_replay {

using namespace downpour;
using namespace downpour::testing;
using namespace std::chrono_literals;

namespace {

const std::vector<std::string> dense_job = {
    "--last-step=1000",  "--log-every=50",        "--pipeline=off",
    "--ps-replicas=2",   "--connect-timeout=30",  "--save-checkpoint-steps=100000",
    "--save-checkpoint-secs=0"};

// 2 ps and one worker (the chief); ps `victim` killed once the chief logged
// local step `at` (none: left alone). The final line's updates lost, if any.
std::int64_t run_job(const temp_dir& dir, const std::vector<std::string>& args, int victim,
                     const std::string& at) {
  auto c = make_cluster(2, 1, dir, args);
  process ps0(c.node("ps", 0), dir / "ps0.log");
  process ps1(c.node("ps", 1), dir / "ps1.log");
  REQUIRE(ps0.wait_for_output("a backup on another ps joined", 60s));
  REQUIRE(ps1.wait_for_output("a backup on another ps joined", 60s));
  process chief(c.node("worker", 0), dir / "w0.log");
  process* dead = victim == 0 ? &ps0 : victim == 1 ? &ps1 : nullptr;
  if (dead) {
    REQUIRE_MESSAGE(chief.wait_for_output(at, 120s), chief.output());
    dead->kill(SIGKILL);
    CHECK(dead->wait(30s) == 128 + SIGKILL);
  }
  for (auto* p : {&chief, &ps0, &ps1}) {
    if (p == dead) continue;
    CAPTURE(p->output());
    CHECK(p->wait(300s) == 0);
  }
  const auto out = chief.output();
  CAPTURE(out);
  REQUIRE(final_of(out));
  if (dead) {
    REQUIRE(failover_of(out));
    CHECK(restored_step(out) == -1);
    MESSAGE("ps " << victim << " killed at global step ~" << failover_of(out)->step << ": "
                  << failover_of(out)->owed << " update(s) owed and sent again, "
                  << final_of(out)->updates_lost << " lost");
  }
  return final_of(out)->updates_lost;
}

// The job with ps `victim` killed at `at` against the single-process
// reference (the job left alone ends on its bits: test_multiprocess).
void check_replay(const std::string& name, int victim, const std::string& at) {
  temp_dir killed(name);
  CHECK(run_job(killed, dense_job, victim, at) == 0);
  options o;
  o.last_step = 1000;
  std::ostringstream log;
  CHECK(holds_bits_of(read_checkpoint(killed / checkpoint_name(1000)),
                      run_reference(o, job_for(o), log)));
}

}  // namespace

TEST_CASE("ps 1 killed with -9 mid-job: the job ends on the bits of the single-process "
          "reference, every update kept and every batch trained once") {
  check_replay("replay-ps1", 1, ",step:300,");
}

TEST_CASE("ps 0 killed with -9 mid-job: the job ends on the bits of the single-process "
          "reference, every update kept and every batch trained once") {
  check_replay("replay-ps0", 0, ",step:600,");
}

TEST_CASE("a sparse logreg job whose ps 1 is killed with -9 ends with the rows of the same job "
          "left alone, bit for bit: no row update lost") {
  temp_dir data("replay-sparse-data");
  process gen({DOWNPOUR_GEN_LIBSVM, "--out", data.str(), "--train", "60000", "--test", "5000",
               "--seed", "3", "--vocabulary", "65536", "--informative", "256"},
              data / "gen.log");
  REQUIRE(gen.wait(120s) == 0);
  auto args = dense_job;
  args[0] = "--last-step=1200";
  for (const auto& a : {std::string("--model=logreg"), std::string("--data-format=libsvm"),
                        "--train-file=" + data / "train.libsvm",
                        "--test-file=" + data / "test.libsvm", std::string("--sparse-rows=65536"),
                        std::string("--sparse-optimizer=adagrad"),
                        std::string("--learning-rate=0.3"), std::string("--lr-decay-rate=1")})
    args.push_back(a);
  temp_dir alone("replay-sparse-alone"), killed("replay-sparse-killed");
  run_job(alone, args, -1, "");
  CHECK(run_job(killed, args, 1, ",step:500,") == 0);
  const auto a = read_checkpoint(alone / checkpoint_name(1200));
  const auto b = read_checkpoint(killed / checkpoint_name(1200));
  CHECK(a.rows.keys.size() > 1000);
  CHECK(a.rows.keys == b.rows.keys);
  CHECK(bit_identical(a.rows.values, b.rows.values));
  CHECK(bit_identical(a.rows.accumulators, b.rows.accumulators));
  CHECK(bit_identical(a.params, b.params));
}

}  // namespace test_failover_replay
