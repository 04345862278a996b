// --trainers K: K trainers in each worker node, behind one exchange per
// shard that merges their requests. In every mode, in one process and over
// TCP, the job ends at exactly its last step; in sync, worker nodes of two
// trainers train as twice as many nodes of one trainer each (the same
// worker indices, so the same batches), within rounding.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "runtime/node/node.hpp"
#include "subprocess.hpp"
#include "test_jobs.hpp"

namespace test_trainers {

using namespace downpour;
using downpour::testing::final_checkpoint;
using downpour::testing::job_for;
using downpour::testing::local_job;
using downpour::testing::temp_dir;

namespace {

const job_model& job() {
  static const job_model j = job_for(options{});
  return j;
}

options trainers_job(std::size_t workers, std::size_t trainers, std::int64_t steps,
                     const temp_dir& dir) {
  static int runs = 0;
  options o = local_job(2, workers, steps, dir / ("run" + std::to_string(++runs)));
  o.trainers = trainers;
  return o;
}

float largest_difference(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  float d = 0.0f;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::fabs(a[i] - b[i]));
  return d;
}

}  // namespace

TEST_CASE("two trainers in each of two worker nodes stop at exactly the last step in async, sync "
          "and ssp, in one process and over TCP, each step's update counted once") {
  const temp_dir dir("trainers");
  for (auto transport : {transport_kind::inproc, transport_kind::tcp})
    for (auto mode : {train_mode::async, train_mode::sync, train_mode::ssp}) {
      CAPTURE(to_string(transport));
      CAPTURE(to_string(mode));
      auto o = trainers_job(2, 2, 40, dir);
      o.transport = transport;
      o.mode = mode;
      o.pipeline = true;
      auto got = run_local(o, job());
      REQUIRE(got);
      CHECK(got->summary.status == job_status::completed);
      CHECK(got->summary.global_step == 40);
      CHECK(final_checkpoint(o).global_step == 40);
      // Undisturbed: one update per step applied, none lost, no pause.
      CHECK(got->summary.updates_applied == 40);
      CHECK(got->summary.updates_lost == 0);
      CHECK(got->summary.failover_pause_s == 0.0);
    }
}

TEST_CASE("in sync, two worker nodes of two trainers train as four worker nodes of one trainer") {
  const temp_dir dir("trainers");
  for (auto transport : {transport_kind::inproc, transport_kind::tcp}) {
    CAPTURE(to_string(transport));
    auto merged = trainers_job(2, 2, 30, dir);
    merged.mode = train_mode::sync;
    merged.transport = transport;
    auto apart = trainers_job(4, 1, 30, dir);
    apart.mode = train_mode::sync;
    apart.transport = transport;
    REQUIRE(run_local(merged, job()));
    REQUIRE(run_local(apart, job()));
    const auto a = final_checkpoint(merged);
    const auto b = final_checkpoint(apart);
    // The mean of four gradients summed in another order: rounding only.
    CHECK(largest_difference(a.params, b.params) < 1e-5f);
    CHECK(largest_difference(a.ema, b.ema) < 1e-5f);
  }
}

}  // namespace test_trainers
