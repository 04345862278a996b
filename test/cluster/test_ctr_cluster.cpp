// dlrm and wide_deep trained through the whole runtime in this process
// (2 ps shards, 2 workers) on planted Criteo data: near the planted AUC
// (test/support/criteo_jobs.hpp) in async, sync and ssp, and a checkpoint naming every
// variable (and keeping the dense variables' slots) that a job restores from, or one
// of format 5 without those slots.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "criteo_jobs.hpp"
#include "model/dense_rules.hpp"
#include "parse_options.hpp"
#include "runtime/files/checkpoint.hpp"
#include "test_jobs.hpp"

namespace test_ctr_cluster {

using namespace downpour;
using namespace downpour::testing;

namespace {

// A 2 ps, 2 worker job of model in this process, as the command line gives it.
options ctr_job(const std::string& model, std::int64_t steps, const std::string& dir,
                const std::vector<std::string>& extra) {
  std::vector<std::string> args = ctr_args(model);
  args.insert(args.end(), extra.begin(), extra.end());
  options o = parse(args);
  const options local = local_job(2, 2, steps, dir);
  o.last_step = local.last_step;
  o.ps_hosts = local.ps_hosts;
  o.worker_hosts = local.worker_hosts;
  o.log_every = local.log_every;
  o.quiet = true;
  o.checkpoint_dir = dir;
  o.connect_timeout_s = local.connect_timeout_s;
  return o;
}

// The job's test AUC below the planted model's.
double auc_gap(const options& o) {
  const auto got = run_local_job(o);
  REQUIRE(got);
  CHECK(got->summary.global_step == o.last_step);
  REQUIRE(got->summary.test_auc);
  REQUIRE(got->summary.test_log_loss);
  MESSAGE(o.model << " " << to_string(o.mode) << ": test AUC " << *got->summary.test_auc
                  << " (planted " << criteo_data().planted_auc << "), log loss "
                  << *got->summary.test_log_loss << " (planted "
                  << criteo_data().planted_log_loss << ")");
  return criteo_data().planted_auc - *got->summary.test_auc;
}

// The gap of a job of model over its ctr_steps.
double trained_gap(const std::string& model, const temp_dir& dir,
                   const std::vector<std::string>& extra) {
  return auc_gap(ctr_job(model, ctr_steps(model), dir.str(), extra));
}

}  // namespace

TEST_CASE("dlrm with two async workers comes within 0.01 of the planted AUC") {
  temp_dir dir("dlrm-async");
  CHECK(trained_gap("dlrm", dir, {}) < ctr_auc_bound);
}

TEST_CASE("dlrm in sync mode comes within 0.01 of the planted AUC") {
  temp_dir dir("dlrm-sync");
  CHECK(trained_gap("dlrm", dir, {"--mode=sync"}) < ctr_auc_bound);
}

TEST_CASE("dlrm in ssp mode comes within 0.01 of the planted AUC") {
  temp_dir dir("dlrm-ssp");
  CHECK(trained_gap("dlrm", dir, {"--mode=ssp", "--staleness=2"}) < ctr_auc_bound);
}

TEST_CASE("wide_deep with two async workers comes within 0.01 of the planted AUC") {
  temp_dir dir("wide-deep-async");
  CHECK(trained_gap("wide_deep", dir, {}) < ctr_auc_bound);
}

TEST_CASE("wide_deep in sync mode comes within 0.01 of the planted AUC") {
  temp_dir dir("wide-deep-sync");
  CHECK(trained_gap("wide_deep", dir, {"--mode=sync"}) < ctr_auc_bound);
}

TEST_CASE("wide_deep in ssp mode comes within 0.01 of the planted AUC") {
  temp_dir dir("wide-deep-ssp");
  CHECK(trained_gap("wide_deep", dir, {"--mode=ssp", "--staleness=2"}) < ctr_auc_bound);
}

TEST_CASE("a dlrm checkpoint names the dense variables and the 26 tables, and a job resumes from it") {
  temp_dir dir("dlrm-resume");
  const options first = ctr_job("dlrm", 100, dir.str(), {});
  REQUIRE(run_local_job(first));
  const checkpoint c = final_checkpoint(first);
  CHECK(c.layout.kind() == "dlrm");
  const auto& tables = c.layout.row_variables();
  REQUIRE(tables.size() == 26);
  CHECK(tables[0].name == "embeddings/C1");
  CHECK(tables[25].name == "embeddings/C26");
  CHECK(tables[1].first_key == 4096);
  CHECK(c.layout.variables().front().name == "bottom/layer1/weights");
  CHECK(c.layout.variables().back().name == "top/layer2/biases");
  CHECK(c.rows.keys.size() > 26);
  const options second = ctr_job("dlrm", 200, dir.str(), {});
  const auto resumed = run_local_job(second);
  REQUIRE(resumed);
  CHECK(resumed->summary.global_step == 200);
}

TEST_CASE(
    "a wide_deep checkpoint keeps the deep MLP's AdaGrad accumulators, and a job on three ps "
    "puts them back") {
  temp_dir dir("wide-deep-slots");
  const options first = ctr_job("wide_deep", 100, dir.str(), {});
  REQUIRE(run_local_job(first));
  const checkpoint c = final_checkpoint(first);
  const auto& deep = c.layout.variables();
  REQUIRE(c.slots.size() == whole_slot_count(deep));
  CHECK(deep.front().update.rule == update_rule::adagrad);
  std::size_t grown = 0;
  for (float a : c.slots) grown += a > 0.1f ? 1 : 0;
  CHECK(grown > c.slots.size() / 2);
  options second = ctr_job("wide_deep", 200, dir.str(), {});
  second.ps_hosts = local_job(3, 2, 200, dir.str()).ps_hosts;
  REQUIRE(run_local_job(second));
  const checkpoint d = final_checkpoint(second);
  REQUIRE(d.slots.size() == c.slots.size());
  // An accumulator only grows: each is at least what the checkpoint held.
  std::size_t below = 0;
  for (std::size_t i = 0; i < d.slots.size(); ++i) below += d.slots[i] < c.slots[i] ? 1 : 0;
  CHECK(below == 0);
}

TEST_CASE(
    "a wide_deep checkpoint of format 5, without the deep MLP's slots, resumes with them "
    "afresh") {
  temp_dir dir("wide-deep-format5");
  const options first = ctr_job("wide_deep", 100, dir.str(), {});
  REQUIRE(run_local_job(first));
  const checkpoint c = final_checkpoint(first);
  checkpoint older = c;
  older.slots.clear();  // what a job before dense slots kept: format 5
  temp_dir old_dir("wide-deep-format5-old");
  const std::string path = save_checkpoint(old_dir.str(), older, 5);
  REQUIRE(inspect_checkpoint(path).format_version == rows_checkpoint_format_version);
  const options second = ctr_job("wide_deep", 200, old_dir.str(), {});
  const auto resumed = run_local_job(second);
  REQUIRE(resumed);
  CHECK(resumed->summary.global_step == 200);
  const checkpoint d = final_checkpoint(second);
  REQUIRE(d.slots.size() == c.slots.size());
  // Restarted at AdaGrad's 0.1, 100 steps grow some less than the first job's 100 did.
  std::size_t below = 0;
  for (std::size_t i = 0; i < d.slots.size(); ++i) below += d.slots[i] < c.slots[i] ? 1 : 0;
  CHECK(below > 0);
}

}  // namespace test_ctr_cluster
