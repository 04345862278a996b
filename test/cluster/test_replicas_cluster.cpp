// --ps-replicas 2 in one process: every shard keeps a backup that takes
// each push before the worker hears back (actors/shard_replicas.cpp). The
// job must train exactly as it does without backups, dense and rows.
#include <doctest/doctest.h>

#include <memory>
#include <sstream>

#include "runtime/node/job.hpp"
#include "runtime/node/node.hpp"
#include "runtime/node/reference_trainer.hpp"
#include "test_jobs.hpp"
#include "two_tables_model.hpp"

namespace test_replicas_cluster {

using namespace downpour;
using namespace downpour::testing;

namespace {

const job_model& dense_job() {
  static const job_model j = job_for(options{});
  return j;
}

const job_model& rows_job() {
  static const job_model j = [] {
    auto train = std::make_shared<libsvm_set>(two_tables_examples(600, 1));
    auto test = std::make_shared<libsvm_set>(two_tables_examples(200, 2));
    auto net = std::make_shared<two_tables_model>();
    model_layout layout = net->layout();
    return job_model{net, std::move(layout),
                     split_data({"train", train}, {"test", test}, data_shape{{0}}, 100)};
  }();
  return j;
}

options replicated(options o, std::size_t r) {
  o.ps_replicas = r;
  return o;
}

}  // namespace

TEST_CASE("one worker with two copies of each of two shards reproduces the reference bit for bit") {
  temp_dir dir("replicas-dense");
  auto opts = replicated(local_job(2, 1, 40, dir / "run"), 2);
  std::ostringstream log;
  auto ref = run_reference(opts, dense_job(), log);
  auto got = run_local(opts, dense_job());
  REQUIRE(got);
  CHECK(got->summary.global_step == 40);
  CHECK(holds_bits_of(final_checkpoint(opts), ref));
}

TEST_CASE("rows trained through shards with backups equal those trained without") {
  temp_dir dir("replicas-rows");
  auto one = local_job(2, 1, 60, dir / "one");
  one.batch_size = 20;
  one.learning_rate = 0.1f;
  one.pipeline = false;
  auto two = replicated(one, 2);
  two.checkpoint_dir = dir / "two";
  REQUIRE(run_local(one, rows_job()));
  REQUIRE(run_local(two, rows_job()));
  const checkpoint a = final_checkpoint(one), b = final_checkpoint(two);
  CHECK(bit_identical(a.params, b.params));
  CHECK(bit_identical(a.ema, b.ema));
  CHECK(a.rows.keys == b.rows.keys);
  CHECK(bit_identical(a.rows.values, b.rows.values));
  CHECK(bit_identical(a.rows.accumulators, b.rows.accumulators));
  CHECK(!a.rows.keys.empty());
}

TEST_CASE("sync with two workers and two copies of each shard ends at exactly the last step") {
  temp_dir dir("replicas-sync");
  auto opts = replicated(local_job(2, 2, 30, dir / "run"), 2);
  opts.mode = train_mode::sync;
  auto got = run_local(opts, dense_job());
  REQUIRE(got);
  CHECK(got->summary.global_step == 30);
  CHECK(final_checkpoint(opts).global_step == 30);
}

}  // namespace test_replicas_cluster
