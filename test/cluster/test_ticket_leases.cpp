// Whole jobs in one process with --ticket-lease 4: the workers take their
// step tickets four at a time, and the job still ends at exactly the last
// step in every mode. One worker reproduces the reference trainer bit for
// bit, so not one push more or less reached the shards; several workers end
// with a checkpoint at the last step (the last leases' unused tickets came
// back, or the job would wait for them forever).
#include <doctest/doctest.h>

#include "runtime/node/job.hpp"
#include "runtime/node/node.hpp"
#include "runtime/node/reference_trainer.hpp"
#include "subprocess.hpp"
#include "test_jobs.hpp"

namespace test_ticket_leases {

using namespace downpour;
using downpour::testing::final_checkpoint;
using downpour::testing::holds_bits_of;
using downpour::testing::job_for;
using downpour::testing::local_job;
using downpour::testing::temp_dir;

namespace {

options leasing_job(std::size_t ps, std::size_t workers, std::int64_t steps, const temp_dir& dir) {
  static int runs = 0;
  auto o = local_job(ps, workers, steps, dir / ("run" + std::to_string(++runs)));
  o.ticket_lease = 4;
  return o;
}

const job_model& job() {
  static const job_model j = job_for(options{});
  return j;
}

}  // namespace

TEST_CASE("one worker leasing 4 tickets at a time reproduces the reference trainer bit for bit, "
          "in async and ssp, in one process and over TCP") {
  temp_dir dir("lease-oracle");
  for (auto mode : {train_mode::async, train_mode::ssp})
    for (auto transport : {transport_kind::inproc, transport_kind::tcp}) {
      CAPTURE(to_string(mode));
      CAPTURE(to_string(transport));
      auto opts = leasing_job(2, 1, 42, dir);  // not a multiple of 4: the last lease is short
      opts.mode = mode;
      opts.transport = transport;
      std::ostringstream log;
      auto ref = run_reference(opts, job(), log);
      auto got = run_local(opts, job());
      REQUIRE(got);
      CHECK(got->summary.global_step == 42);
      CHECK(holds_bits_of(final_checkpoint(opts), ref));
    }
}

TEST_CASE("three workers leasing 4 tickets at a time stop at exactly the last step in async, ssp "
          "and sync, each step's update counted once") {
  temp_dir dir("lease-modes");
  for (auto mode : {train_mode::async, train_mode::ssp, train_mode::sync})
    for (auto transport : {transport_kind::inproc, transport_kind::tcp}) {
      CAPTURE(to_string(mode));
      CAPTURE(to_string(transport));
      auto opts = leasing_job(2, 3, 61, dir);
      opts.mode = mode;
      opts.staleness = 1;  // ssp: a worker ahead waits for the slowest while holding its lease
      opts.pipeline = true;
      opts.transport = transport;
      auto got = run_local(opts, job());
      REQUIRE(got);
      CHECK(got->summary.global_step == 61);
      CHECK(final_checkpoint(opts).global_step == 61);
      // Undisturbed: one update per step applied, none lost, no pause.
      CHECK(got->summary.updates_applied == 61);
      CHECK(got->summary.updates_lost == 0);
      CHECK(got->summary.failover_pause_s == 0.0);
    }
}

}  // namespace test_ticket_leases
