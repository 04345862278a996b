// What a model predicts (prediction: classes, a probability, a value) and
// the figures evaluation, the final line and summary.json report for each.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "model/model.hpp"
#include "runtime/node/job.hpp"

namespace test_output_kinds {

using namespace downpour;

namespace {

// One feature per example, one label.
struct pairs_set final : dataset {
  std::vector<float> x;
  std::vector<std::int32_t> y;
  std::size_t size() const override { return x.size(); }
  std::size_t features() const override { return 1; }
  void copy_features(std::size_t i, float* out) const override { *out = x[i]; }
  std::int32_t label(std::size_t i) const override { return y[i]; }
};

// Scores its feature: as the value (value) or as the logit of label 1
// (probability: [0, x]).
class echo final : public model {
 public:
  explicit echo(prediction kind) : kind_(kind) {}
  model_layout layout() const override { return model_layout("echo", "", {{"w", 1, 1, {}, false}}); }
  std::size_t classes() const override { return kind_ == prediction::value ? 1 : 2; }
  prediction predicts() const override { return kind_; }
  std::unique_ptr<model_workspace> workspace(std::size_t n) const override {
    struct ws final : model_workspace {
      prediction kind;
      std::vector<float> out;
      ws(prediction k, std::size_t n) : kind(k), out(2 * n) {}
      float loss_and_gradient(const float*, const batch&, float*) override { return 0; }
      float loss(const float*, const batch&) override { return 0; }
      const float* scores(const float*, const batch& b) override {
        for (std::size_t i = 0; i < b.size; ++i) {
          if (kind == prediction::value) {
            out[i] = b.x[i];
          } else {
            out[2 * i] = 0.0f;
            out[2 * i + 1] = b.x[i];
          }
        }
        return out.data();
      }
    };
    return std::make_unique<ws>(kind_, n);
  }

 private:
  prediction kind_;
};

}  // namespace

TEST_CASE("a model predicting a value is measured by the RMSE against its labels") {
  pairs_set set;
  set.x = {1.0f, 2.0f, 4.0f, 0.5f};
  set.y = {1, 3, 2, 0};
  const float w = 0.0f;
  const accuracy_report r = evaluate(echo(prediction::value), &w, set);
  CHECK(r.kind == prediction::value);
  CHECK(r.rmse == doctest::Approx(std::sqrt((0.0 + 1.0 + 4.0 + 0.25) / 4)));
  CHECK(r.overall == 0.0);
  CHECK(r.per_class.empty());
  CHECK(r.examples == 4);
}

TEST_CASE("a model predicting a probability is measured by accuracy at 0.5, log loss and AUC") {
  pairs_set set;
  set.x = {-2.0f, 1.0f, 0.5f, -0.5f};
  set.y = {0, 1, 0, 1};
  const float w = 0.0f;
  const accuracy_report r = evaluate(echo(prediction::probability), &w, set);
  CHECK(r.kind == prediction::probability);
  CHECK(r.overall == doctest::Approx(0.5));
  double loss = 0.0;
  for (std::size_t i = 0; i < 4; ++i)
    loss += std::log1p(std::exp(set.y[i] ? -set.x[i] : set.x[i]));
  CHECK(r.log_loss == doctest::Approx(loss / 4));
  // Positives at 1 and -0.5, negatives at -2 and 0.5: 3 of 4 pairs ordered.
  CHECK(r.auc == doctest::Approx(0.75));
}

TEST_CASE("the final line and summary.json carry the figures of what the model predicts") {
  accuracy_report classes;
  classes.overall = 0.9;
  run_summary c;
  add_test_figures(c, classes, classes);
  CHECK(final_line(c).find("test_log_loss") == std::string::npos);
  CHECK(final_line(c).find("test_rmse") == std::string::npos);

  accuracy_report probability = classes;
  probability.kind = prediction::probability;
  probability.log_loss = 0.45;
  probability.auc = 0.8;
  run_summary p;
  add_test_figures(p, probability, probability);
  CHECK(final_line(p).find(" test_log_loss=0.45000 test_auc=0.8000 ") != std::string::npos);
  CHECK(parse_summary_json(summary_json(p))->test_auc == doctest::Approx(0.8));

  accuracy_report value;
  value.kind = prediction::value;
  value.rmse = 1.25;
  run_summary v;
  add_test_figures(v, value, value);
  CHECK(final_line(v).find(" test_rmse=1.25000 ") != std::string::npos);
  CHECK(final_line(v).find("test_auc") == std::string::npos);
  const auto back = parse_summary_json(summary_json(v));
  REQUIRE(back);
  REQUIRE(back->test_rmse);
  CHECK(*back->test_rmse == doctest::Approx(1.25));
  CHECK(std::string(to_string(prediction::value)) == "value");
}

}  // namespace test_output_kinds
