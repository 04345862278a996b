// A short chaos run (test/support/chaos.hpp, the engine of scripts/chaos): each of the
// four nodes of the original async job killed with -9 once during a job and
// started again at once; every kill waits for training progress in the logs.
#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>

#include "chaos.hpp"

namespace test_chaos {

using namespace downpour::testing;

namespace {

// A 3,000-step run of 4 kills with this seed (and copies of each shard),
// its report shown and every failure it names checked.
chaos_outcome short_run(const std::string& name, unsigned seed, std::size_t ps_replicas) {
  temp_dir dir(name);
  chaos_options o;
  o.last_step = 3000;
  o.kills = 4;
  o.seed = seed;
  o.min_accuracy = 0.80;
  o.ps_replicas = ps_replicas;
  o.logdir = dir.str();
  std::ostringstream report;
  auto outcome = chaos_run(o, report).run();
  MESSAGE(report.str());
  for (const auto& f : outcome.failures) CHECK_MESSAGE(false, f);
  CHECK(outcome.final_step == 3000);
  return outcome;
}

}  // namespace

TEST_CASE("a ps, the chief and a worker killed with -9 and restarted: the job ends at exactly "
          "its last step, above the accuracy floor, every node exiting 0") {
  // One round: every node once, in the seed's order.
  const auto outcome = short_run("chaos", 14, 1);
  CHECK(outcome.ema_test_accuracy >= 0.80);
  auto victims = outcome.victims;
  std::sort(victims.begin(), victims.end());
  CHECK(victims == std::vector<std::string>{"ps 0", "ps 1", "worker 0", "worker 1"});
}

TEST_CASE("--ps-replicas 2: ps killed with -9 four times in the seed's order: a ps serving a "
          "shard fails over to its backup, each one started again catches up; the job ends "
          "exactly, nothing rolled back") {
  const auto outcome = short_run("chaos-replicas", 7, 2);
  CHECK(outcome.victims.size() == 4);
  CHECK(outcome.lost == 0);  // the pushes in flight to each lost primary were sent again
}

}  // namespace test_chaos
