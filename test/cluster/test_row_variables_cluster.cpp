// A model with two row variables of different widths and rules (FTRL on 1
// float a key, AdaGrad on 3) trained through shards and a worker in this
// process, against the same updates computed directly: one shard, and two
// shards whose key ranges split at a key inside the second variable.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "data/batcher.hpp"
#include "model/init.hpp"
#include "model/row_tables.hpp"
#include "model/schedule.hpp"
#include "model/update.hpp"
#include "npz_reader.hpp"
#include "protocol/placement.hpp"
#include "runtime/cli/commands.hpp"
#include "runtime/node/job.hpp"
#include "runtime/node/node.hpp"
#include "subprocess.hpp"
#include "test_jobs.hpp"
#include "two_tables_model.hpp"

namespace test_row_variables_cluster {

using namespace downpour;
using namespace downpour::testing;

namespace {

job_model two_tables_job() {
  auto train = std::make_shared<libsvm_set>(two_tables_examples(600, 1));
  auto test = std::make_shared<libsvm_set>(two_tables_examples(200, 2));
  auto net = std::make_shared<two_tables_model>();
  model_layout layout = net->layout();
  return job_model{net, std::move(layout),
                   split_data({"train", train}, {"test", test}, data_shape{{0}}, 100)};
}

const job_model& job() {
  static const job_model j = two_tables_job();
  return j;
}

struct direct_result {
  std::vector<float> params;
  row_dump rows;
};

// One worker's steps as the shards apply them: the bias by SGD, each row
// by its variable's rule at the job's learning rate and step.
direct_result direct(const options& o) {
  direct_result r{initial_parameters(job().layout, o.seed), {}};
  row_tables tables(row_tables_of(job().layout, o.seed));
  auto ws = job().net->workspace(o.batch_size);
  batcher batches(job().data.train, o.batch_size, worker_batch_seed(o.seed, 0));
  std::vector<float> grad(job().layout.size());
  for (std::int64_t step = 0; step < o.last_step; ++step) {
    const batch b = batches.next_batch();
    keyed_rows pushed{ws->touched_rows(b), {}};
    const std::vector<float> rows = tables.pull(pushed.keys);
    pushed.values.resize(rows.size());
    ws->loss_and_gradient(r.params.data(), rows.data(), b, grad.data(), pushed.values.data());
    const float lr = learning_rate_at(schedule_for(o), step);
    sgd_into(r.params.data(), r.params.data(), grad.data(), grad.size(), lr);
    REQUIRE_FALSE(tables.push(pushed, {lr, step}));
  }
  r.rows = tables.dump(0, tables.spec().keys());
  return r;
}

options two_tables_options(std::size_t ps, const temp_dir& dir, const std::string& run) {
  options o = local_job(ps, 1, 60, dir / run);
  o.batch_size = 20;
  o.learning_rate = 0.1f;
  return o;
}

void check_rows_match(const checkpoint& c, const direct_result& want) {
  CHECK(c.params == want.params);
  REQUIRE(c.rows.keys == want.rows.keys);
  REQUIRE(c.rows.values.size() == want.rows.values.size());
  for (std::size_t i = 0; i < want.rows.values.size(); ++i)
    CHECK(c.rows.values[i] == doctest::Approx(want.rows.values[i]).epsilon(1e-6));
  REQUIRE(c.rows.accumulators.size() == want.rows.accumulators.size());
  for (std::size_t i = 0; i < want.rows.accumulators.size(); ++i)
    CHECK(c.rows.accumulators[i] == doctest::Approx(want.rows.accumulators[i]).epsilon(1e-6));
}

}  // namespace

TEST_CASE("two row variables of different widths and rules train through one shard as computed "
          "directly") {
  const temp_dir dir("row-vars");
  const options o = two_tables_options(1, dir, "one");
  REQUIRE(run_local(o, job()));
  const checkpoint c = final_checkpoint(o);
  CHECK(c.layout.row_variable("wide").update.rule == update_rule::ftrl);
  CHECK(c.layout.row_variable("emb").update.rule == update_rule::adagrad);
  const direct_result want = direct(o);
  CHECK(want.rows.keys.front() < kWide);  // both variables touched
  CHECK(want.rows.keys.back() >= kWide);
  check_rows_match(c, want);
}

TEST_CASE("two shards whose key ranges split inside a variable train the same rows") {
  const temp_dir dir("row-vars");
  const options o = two_tables_options(2, dir, "two");
  // Keys [0, 32) and [32, 64): the second shard holds the end of "wide"
  // and all of "emb".
  REQUIRE(row_boundaries(kWide + kEmb, 2)[1] < kWide);
  REQUIRE(run_local(o, job()));
  check_rows_match(final_checkpoint(o), direct(o));
}

TEST_CASE("inspect names every row variable with its rule, and export writes each one's values "
          "and slots") {
  const temp_dir dir("row-vars");
  const options o = two_tables_options(1, dir, "cli");
  REQUIRE(run_local(o, job()));
  const checkpoint c = final_checkpoint(o);
  options cmd;
  cmd.checkpoint_file = o.checkpoint_dir + "/" + checkpoint_name(o.last_step);
  cmd.command = command_kind::inspect;
  std::ostringstream out;
  std::ostringstream err;
  REQUIRE(run_command(cmd, {}, out, err) == 0);
  const auto& keys = c.rows.keys;
  const auto wide = static_cast<std::size_t>(
      std::lower_bound(keys.begin(), keys.end(), kWide) - keys.begin());
  const std::size_t emb = keys.size() - wide;
  const std::string shown = out.str();
  CHECK(shown.find("format_version: 5") != std::string::npos);
  CHECK(shown.find("variable: wide rows shape=[40, 1] update=ftrl rows_held=" +
                   std::to_string(wide)) != std::string::npos);
  CHECK(shown.find("variable: emb rows shape=[24, 3] update=adagrad rows_held=" +
                   std::to_string(emb)) != std::string::npos);
  cmd.command = command_kind::export_npz;
  cmd.out_file = dir / "rows.npz";
  REQUIRE(run_command(cmd, {}, out, err) == 0);
  const auto values = read_npz_array(cmd.out_file, "emb/values");
  CHECK(values.shape == std::vector<std::size_t>{emb, kEmbCols});
  CHECK(std::equal(values.values.begin(), values.values.end(), c.rows.values.begin() + wide));
  // FTRL's slots of a row are n then z: the rows' n, then their z ("linear").
  const auto n = read_npz_array(cmd.out_file, "wide/accumulators");
  const auto z = read_npz_array(cmd.out_file, "wide/linear");
  REQUIRE(z.shape == std::vector<std::size_t>{wide, 1});
  for (std::size_t i = 0; i < wide; ++i) {
    CHECK(n.values[i] == c.rows.accumulators[2 * i]);
    CHECK(z.values[i] == c.rows.accumulators[2 * i + 1]);
  }
  const auto acc = read_npz_array(cmd.out_file, "emb/accumulators");
  CHECK(acc.shape == std::vector<std::size_t>{emb, kEmbCols});
  CHECK(acc.values.back() == c.rows.accumulators.back());
}

}  // namespace test_row_variables_cluster

namespace test_row_variables_cluster {

TEST_CASE("in sync, one worker node of two trainers, their pulls and pushes merged, trains the "
          "rows as two worker nodes of one trainer each") {
  const temp_dir dir("row-vars");
  options merged = two_tables_options(2, dir, "merged");
  merged.mode = train_mode::sync;
  merged.trainers = 2;
  options apart = two_tables_options(2, dir, "apart");
  apart.mode = train_mode::sync;
  apart.worker_hosts.assign(2, host_port{"127.0.0.1", 0});
  REQUIRE(run_local(merged, job()));
  REQUIRE(run_local(apart, job()));
  const checkpoint a = final_checkpoint(merged);
  const checkpoint b = final_checkpoint(apart);
  REQUIRE(a.rows.keys == b.rows.keys);
  // A round's row gradients are averaged in arrival order: rounding only.
  for (std::size_t i = 0; i < a.params.size(); ++i)
    CHECK(a.params[i] == doctest::Approx(b.params[i]).epsilon(1e-5));
  REQUIRE(a.rows.values.size() == b.rows.values.size());
  for (std::size_t i = 0; i < a.rows.values.size(); ++i)
    CHECK(a.rows.values[i] == doctest::Approx(b.rows.values[i]).epsilon(1e-5));
}

}  // namespace test_row_variables_cluster
