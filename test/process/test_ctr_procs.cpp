// dlrm and wide_deep as a cluster of downpour processes (2 ps, 2 workers) on
// planted Criteo data: near the planted AUC (criteo_jobs.hpp), then eval reports the
// checkpoint's log loss and AUC, and inspect and export name every variable.
#include <doctest/doctest.h>

#include <chrono>
#include <regex>
#include <string>
#include <vector>

#include "cluster_procs.hpp"
#include "criteo_jobs.hpp"
#include "log_lines.hpp"
#include "subprocess.hpp"

namespace test_ctr_procs {

using namespace downpour;
using namespace downpour::testing;
using namespace std::chrono_literals;

namespace {

// The value of key=V in text's first line holding it; NaN if none does.
double value_of(const std::string& text, const std::string& key) {
  std::smatch m;
  if (std::regex_search(text, m, std::regex(key + "=(\\S+)"))) return std::stod(m[1]);
  return std::nan("");
}

// Every variable of the model, dense and rows.
std::vector<std::string> variables_of(const std::string& model) {
  std::vector<std::string> names;
  if (model == "dlrm") {
    names = {"bottom/layer1/weights", "bottom/layer2/biases", "top/layer1/weights",
             "top/layer2/biases"};
  } else {
    names = {"deep/layer1/weights", "deep/layer2/biases", "linear/features", "linear/crosses"};
  }
  for (int j = 1; j <= 26; ++j) names.push_back("embeddings/C" + std::to_string(j));
  return names;
}

void train_and_check(const std::string& model) {
  temp_dir dir(model + "-procs");
  auto extra = ctr_args(model);
  extra.push_back("--last-step=" + std::to_string(ctr_steps(model)));
  extra.push_back("--log-every=100000");
  auto c = make_cluster(2, 2, dir / "ckpt", extra);
  {
    two_by_two nodes(c, dir);
    for (auto* p : nodes.all()) CHECK(p->wait(300s) == 0);
    const auto out = nodes.chief.output();
    REQUIRE(final_of(out));
    CHECK(final_of(out)->global_step == ctr_steps(model));
    const double auc = value_of(out, "test_auc");
    MESSAGE(model << ": test AUC " << auc << ", planted " << criteo_data().planted_auc);
    CHECK(auc > criteo_data().planted_auc - ctr_auc_bound);
  }
  // The options as trained: eval builds the same model.
  std::vector<std::string> eval_args = {DOWNPOUR_BINARY, "eval", "--checkpoint-dir=" + dir / "ckpt"};
  for (const auto& a : ctr_args(model)) eval_args.push_back(a);
  process eval(eval_args, dir / "eval.log");
  REQUIRE(eval.wait(120s) == 0);
  CHECK(value_of(eval.output(), "test_auc") > criteo_data().planted_auc - ctr_auc_bound);
  CHECK(eval.output().find("test_log_loss=") != std::string::npos);

  process inspect({DOWNPOUR_BINARY, "inspect", "--checkpoint-dir=" + dir / "ckpt"},
                  dir / "inspect.log");
  REQUIRE(inspect.wait(60s) == 0);
  for (const auto& name : variables_of(model))
    CHECK_MESSAGE(inspect.output().find(name) != std::string::npos, name);

  process exp({DOWNPOUR_BINARY, "export", "--checkpoint-dir=" + dir / "ckpt",
               "--out=" + dir / "m.npz"},
              dir / "export.log");
  REQUIRE(exp.wait(60s) == 0);
  process names({DOWNPOUR_PYTHON, "-c",
                 "import numpy, sys; print(' '.join(sorted(numpy.load(sys.argv[1]).files)))",
                 dir / "m.npz"},
                dir / "names.log");
  REQUIRE(names.wait(60s) == 0);
  for (const auto& name : variables_of(model))
    CHECK_MESSAGE(names.output().find(name) != std::string::npos, name);
}

}  // namespace

TEST_CASE("two ps and two worker processes train dlrm within 0.01 of the planted AUC; eval, "
          "inspect and export name it whole") {
  train_and_check("dlrm");
}

TEST_CASE("two ps and two worker processes train wide_deep within 0.01 of the planted AUC; eval, "
          "inspect and export name it whole") {
  train_and_check("wide_deep");
}

}  // namespace test_ctr_procs
