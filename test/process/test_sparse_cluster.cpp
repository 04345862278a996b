// The hashed-feature logistic regression (a sparse variable of rows pulled
// and pushed by key) trained through the whole runtime, on libsvm data drawn
// from a planted model whose test log loss is the best a learner can reach:
// in one process (async and sync) and as a cluster of processes, with its
// checkpoints, restore on another shard count, inspect and export.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "cluster_procs.hpp"
#include "log_lines.hpp"
#include "runtime/files/checkpoint.hpp"
#include "subprocess.hpp"

namespace test_sparse_cluster {

using namespace downpour;
using namespace downpour::testing;
using namespace std::chrono_literals;

namespace {

// 200000 training examples (2000 steps of 100 are one pass) over a
// vocabulary of 2^20 features, 1024 of them informative: a pass is enough
// to come within a few percent of the planted log loss (the defaults'
// 16M-feature vocabulary needs millions of examples; docs/sparse.md).
struct planted_data {
  temp_dir dir{"sparse-data"};
  double planted_log_loss = 0;
  double constant_log_loss = 0;  // of the best constant predictor
  planted_data() {
    process gen(
        {DOWNPOUR_GEN_LIBSVM, "--out", dir.str(), "--train", "200000", "--test", "20000", "--seed",
         "5", "--vocabulary", "1048576", "--informative", "1024", "--weight-stddev", "0.4"},
        dir / "gen.log");
    REQUIRE(gen.wait(120s) == 0);
    std::ifstream in(dir / "planted.json");
    const auto j = nlohmann::json::parse(in);
    planted_log_loss = j["planted_test_log_loss"].get<double>();
    constant_log_loss = j["constant_test_log_loss"].get<double>();
  }
  std::vector<std::string> args() const {
    return {"--model=logreg",
            "--data-format=libsvm",
            "--train-file=" + dir / "train.libsvm",
            "--test-file=" + dir / "test.libsvm",
            "--sparse-rows=262144",
            "--sparse-optimizer=adagrad",
            "--learning-rate=0.3",
            "--lr-decay-rate=1",
            "--save-checkpoint-secs=0"};
  }
};

const planted_data& data() {
  static const planted_data d;
  return d;
}

// The job's arguments with extra's "--key=value" in place of the same key's.
std::vector<std::string> local_args(const std::string& ckpt, std::vector<std::string> extra) {
  std::vector<std::string> a = {DOWNPOUR_BINARY, "--checkpoint-dir=" + ckpt, "--quiet",
                                "--log-every=100000"};
  auto key = [](const std::string& arg) { return arg.substr(0, arg.find('=') + 1); };
  for (auto& x : data().args()) {
    const bool replaced = std::any_of(extra.begin(), extra.end(),
                                      [&](const std::string& e) { return key(e) == key(x); });
    if (!replaced) a.push_back(x);
  }
  for (auto& x : extra) a.push_back(x);
  return a;
}

// The value of key=V in the chief's final line; NaN if there is none.
double final_value(const std::string& text, const std::string& key) {
  const std::regex re(key + "=(\\S+)");
  for (const auto& r : parse_log(text)) {
    std::smatch m;
    if (r.message.rfind("final: ", 0) == 0 && std::regex_search(r.message, m, re))
      return std::stod(m[1]);
  }
  return std::nan("");
}

// Trains in one process and returns the final line's test log loss above
// the planted model's, as a fraction.
double gap_to_planted(const temp_dir& dir, std::vector<std::string> extra) {
  process job(local_args(dir / "ckpt", std::move(extra)), dir / "job.log");
  REQUIRE(job.wait(300s) == 0);
  const auto out = job.output();
  REQUIRE(final_of(out));
  CHECK(final_of(out)->global_step == 2000);
  const double loss = final_value(out, "test_log_loss");
  MESSAGE("test log loss " << loss << ", planted " << data().planted_log_loss);
  return loss / data().planted_log_loss - 1.0;
}

}  // namespace

TEST_CASE(
    "hashed logistic regression with two async workers comes within 3% of the planted log loss in "
    "one pass") {
  temp_dir dir("sparse-async");
  const double gap = gap_to_planted(dir, {"--last-step=2000"});
  CHECK(gap < 0.03);
  CHECK(gap > -0.01);  // never better than the model that drew the labels, beyond noise
}

TEST_CASE(
    "hashed logistic regression in sync mode averages rows per worker and comes within 3% of the "
    "planted log loss") {
  temp_dir dir("sparse-sync");
  const double gap = gap_to_planted(dir, {"--last-step=2000", "--mode=sync"});
  CHECK(gap < 0.03);
}

TEST_CASE(
    "hashed logistic regression in ssp mode keeps its workers within the staleness bound and "
    "learns as async") {
  temp_dir dir("sparse-ssp");
  CHECK(gap_to_planted(dir, {"--last-step=2000", "--mode=ssp", "--staleness=2"}) < 0.03);
}

TEST_CASE("a factorization machine's rows of weight and factors train through the same runtime") {
  temp_dir dir("sparse-fm");
  auto args = local_args(dir / "ckpt", {"--last-step=2000", "--model=fm", "--fm-factors=4",
                                        "--learning-rate=0.1"});
  process job(args, dir / "job.log");
  REQUIRE(job.wait(300s) == 0);
  CHECK(final_value(job.output(), "test_log_loss") < data().constant_log_loss - 0.05);
  const auto c = read_checkpoint(dir / "ckpt/model.ckpt-2000");
  REQUIRE(only_row_variable(c.layout));
  CHECK(only_row_variable(c.layout)->cols == 5);
  CHECK(c.rows.values.size() == 5 * c.rows.keys.size());
}

TEST_CASE(
    "a sparse checkpoint holds the rows trained, resumes on three shards and exports keys and "
    "values") {
  temp_dir dir("sparse-resume");
  const auto ckpt = dir / "ckpt";
  auto first = local_args(ckpt, {"--last-step=300", "--worker-hosts=127.0.0.1:1"});
  process a(first, dir / "a.log");
  REQUIRE(a.wait(120s) == 0);
  const auto at300 = read_checkpoint(ckpt + "/model.ckpt-300");
  CHECK(only_row_variable(at300.layout));
  CHECK(at300.rows.keys.size() > 1000);
  CHECK(at300.rows.accumulators.size() == at300.rows.values.size());
  auto second = local_args(ckpt, {"--last-step=600", "--worker-hosts=127.0.0.1:1",
                                  "--ps-hosts=127.0.0.1:1,127.0.0.1:2,127.0.0.1:3"});
  process b(second, dir / "b.log");
  REQUIRE(b.wait(120s) == 0);
  CHECK(restored_step(b.output()) == 300);
  REQUIRE(final_of(b.output()));
  CHECK(final_of(b.output())->global_step == 600);
  const auto at600 = read_checkpoint(ckpt + "/model.ckpt-600");
  CHECK(at600.rows.keys.size() >= at300.rows.keys.size());

  process inspect({DOWNPOUR_BINARY, "inspect", "--checkpoint-dir=" + ckpt,
                   "--ps-hosts=127.0.0.1:1,127.0.0.1:2"},
                  dir / "inspect.log");
  REQUIRE(inspect.wait(60s) == 0);
  const auto shown = inspect.output();
  CHECK(shown.find("rows_held=" + std::to_string(at600.rows.keys.size())) != std::string::npos);
  CHECK(shown.find("rows: ps 0 [0, 131072) holds ") != std::string::npos);
  CHECK(shown.find("rows: ps 1 [131072, 262144) holds ") != std::string::npos);

  process exp({DOWNPOUR_BINARY, "export", "--checkpoint-dir=" + ckpt, "--out=" + dir / "m.npz"},
              dir / "export.log");
  REQUIRE(exp.wait(60s) == 0);
  process check({DOWNPOUR_PYTHON, "-c",
                 "import numpy, sys; z = numpy.load(sys.argv[1]); k = z['weights/keys']; "
                 "v = z['weights/values']; assert k.dtype == numpy.uint64, k.dtype; "
                 "assert v.shape == (len(k), 1), v.shape; assert (numpy.diff(k) > 0).all(); "
                 "print(len(k), z['bias'].shape)",
                 dir / "m.npz"},
                dir / "check.log");
  CHECK(check.wait(60s) == 0);
  CHECK(check.output().find(std::to_string(at600.rows.keys.size())) != std::string::npos);
}

TEST_CASE(
    "two ps and two worker processes train the sparse model to the exact last step and every node "
    "exits 0") {
  temp_dir dir("sparse-procs");
  auto extra = data().args();
  extra.push_back("--last-step=1000");
  extra.push_back("--log-every=100000");
  auto c = make_cluster(2, 2, dir / "ckpt", extra);
  two_by_two nodes(c, dir);
  for (auto* p : nodes.all()) CHECK(p->wait(300s) == 0);
  const auto out = nodes.chief.output();
  REQUIRE(final_of(out));
  CHECK(final_of(out)->global_step == 1000);
  // 1000 steps are half a pass: well below the constant predictor already.
  CHECK(final_value(out, "test_log_loss") < data().constant_log_loss - 0.01);
  const auto ckpt = read_checkpoint(dir / "ckpt/model.ckpt-1000");
  CHECK(ckpt.rows.keys.size() > 1000);
}

TEST_CASE("status shows the keys each shard of a sparse cluster serves per second") {
  temp_dir dir("sparse-status");
  auto extra = data().args();
  for (const char* x : {"--last-step=200000", "--log-every=100", "--connect-timeout=20"})
    extra.push_back(x);
  auto c = make_cluster(2, 1, dir, extra);
  process ps0(c.node("ps", 0), dir / "ps0.log");
  process ps1(c.node("ps", 1), dir / "ps1.log");
  process chief(c.node("worker", 0), dir / "w0.log");
  REQUIRE(chief.wait_for_output("global_step:", 60s));
  process status({DOWNPOUR_BINARY, "status", "--json", "--chief=" + c.workers}, dir / "status.log");
  REQUIRE(status.wait(30s) == 0);
  CAPTURE(status.output());
  const auto j = nlohmann::json::parse(status.output());
  for (const auto& shard : j.at("shards")) {
    CHECK(shard.at("rows_held").get<std::uint64_t>() > 0);
    CHECK(shard.at("keys_pulled_per_s").get<std::uint64_t>() > 0);
    CHECK(shard.at("keys_pushed_per_s").get<std::uint64_t>() > 0);
  }
  process text({DOWNPOUR_BINARY, "status", "--chief=" + c.workers}, dir / "text.log");
  REQUIRE(text.wait(30s) == 0);
  const std::regex shard_line("shard [01]: .* keys_pulled_per_s=[1-9][0-9]* keys_pushed_per_s=[1-9]");
  const auto out = text.output();
  CAPTURE(out);
  CHECK(std::distance(std::sregex_iterator(out.begin(), out.end(), shard_line),
                      std::sregex_iterator()) == 2);
  for (auto* p : {&chief, &ps0, &ps1}) p->kill(SIGKILL);
}

TEST_CASE("a sync cluster of the sparse model goes on when a worker is killed and ends exactly") {
  temp_dir dir("sparse-kill");
  auto extra = data().args();
  for (const char* x : {"--mode=sync", "--last-step=20000", "--log-every=50"}) extra.push_back(x);
  auto c = make_cluster(2, 2, dir / "ckpt", extra);
  two_by_two nodes(c, dir);
  REQUIRE(nodes.w1.wait_until(
      [](const std::string& out) { return newest_progress_step(out) >= 300; }, 120s));
  nodes.w1.kill(SIGKILL);
  CHECK(nodes.w1.wait(30s) == 128 + SIGKILL);
  for (auto* p : {&nodes.chief, &nodes.ps0, &nodes.ps1}) CHECK(p->wait(300s) == 0);
  REQUIRE(final_of(nodes.chief.output()));
  CHECK(final_of(nodes.chief.output())->global_step == 20000);
}

TEST_CASE(
    "two ps and two worker processes with 2^61 rows train, checkpoint, resume and export: no "
    "message grows with the row count") {
  temp_dir dir("sparse-huge");
  auto extra = data().args();
  for (auto& x : extra)
    if (x.rfind("--sparse-rows=", 0) == 0) x = "--sparse-rows=2305843009213693952";
  extra.push_back("--log-every=100000");
  auto c = make_cluster(2, 2, dir / "ckpt", extra);
  {
    two_by_two first(c, dir, {"--last-step=200"});
    for (auto* p : first.all()) CHECK(p->wait(120s) == 0);
    REQUIRE(final_of(first.chief.output()));
    CHECK(final_of(first.chief.output())->global_step == 200);
  }
  const auto at200 = read_checkpoint(dir / "ckpt/model.ckpt-200");
  REQUIRE(only_row_variable(at200.layout));
  CHECK(only_row_variable(at200.layout)->rows == (std::uint64_t{1} << 61));
  CHECK(at200.rows.keys.size() > 1000);
  {
    two_by_two second(c, dir, {"--last-step=400"}, "b");
    for (auto* p : second.all()) CHECK(p->wait(120s) == 0);
    CHECK(restored_step(second.chief.output()) == 200);
    REQUIRE(final_of(second.chief.output()));
    CHECK(final_of(second.chief.output())->global_step == 400);
  }
  const auto at400 = read_checkpoint(dir / "ckpt/model.ckpt-400");
  CHECK(at400.rows.keys.size() >= at200.rows.keys.size());
  process exp({DOWNPOUR_BINARY, "export", "--checkpoint-dir=" + dir / "ckpt",
               "--out=" + dir / "m.npz"},
              dir / "export.log");
  CHECK(exp.wait(60s) == 0);
}

}  // namespace test_sparse_cluster
