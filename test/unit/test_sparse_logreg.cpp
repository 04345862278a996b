// Hashed logistic regression and the planted model it learns: the rows a
// batch touches, the gradient against finite differences, the metrics by
// hand, the generator's determinism and skew, and a short training run that
// gets within a few percent of the planted model's log loss.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <vector>

#include "model/sparse_metrics.hpp"
#include "bench/support/sparse_planted.hpp"
#include "bench/support/sparse_trainer.hpp"

namespace downpour::test_sparse_logreg {
namespace {

sparse_examples small_set() {
  sparse_examples set;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<float> value(-1.5f, 1.5f);
  for (int i = 0; i < 40; ++i) {
    std::set<std::uint64_t> keys;
    while (keys.size() < 6) keys.insert(rng() % 500);
    for (std::uint64_t k : keys) {
      set.keys.push_back(k);
      set.values.push_back(value(rng));
    }
    set.close_example(static_cast<std::uint8_t>(rng() % 2));
  }
  return set;
}

// The mean log loss of the batch the logreg_batch holds at weights and bias.
double batch_loss(logreg_batch& batch, const std::vector<float>& weights, float bias,
                  const sparse_examples& set) {
  const std::vector<float>& z = batch.logits(weights.data(), bias);
  double loss = 0;
  for (std::size_t i = 0; i < z.size(); ++i) loss += logistic_loss(z[i], set.labels[i]);
  return loss / static_cast<double>(z.size());
}

}  // namespace

TEST_CASE("a batch's keys are the sorted unique rows its features hash into") {
  const sparse_logreg model(64, 9);
  const sparse_examples set = small_set();
  logreg_batch batch(model);
  const std::vector<std::uint64_t> keys = batch.gather(set, 5, 25);
  std::set<std::uint64_t> expected;
  for (std::uint64_t j = set.offsets[5]; j < set.offsets[25]; ++j)
    expected.insert(model.row_of(set.keys[j]));
  CHECK(keys == std::vector<std::uint64_t>(expected.begin(), expected.end()));
  CHECK(keys.back() < 64);
  // 120 features in 64 rows: some share a row, which the gradient must sum.
  CHECK(keys.size() < set.offsets[25] - set.offsets[5]);
  CHECK_THROWS_AS(batch.gather(set, 30, 41), std::invalid_argument);
}

TEST_CASE("the gradient matches central finite differences of the batch loss") {
  const sparse_logreg model(64, 9);  // few rows: collisions within examples too
  const sparse_examples set = small_set();
  logreg_batch batch(model);
  const std::vector<std::uint64_t> keys = batch.gather(set, 0, set.size());
  std::mt19937_64 rng(4);
  std::normal_distribution<float> normal(0.0f, 0.5f);
  std::vector<float> w(keys.size());
  for (float& x : w) x = normal(rng);
  const float bias = -0.3f;
  const logreg_gradient g = batch.loss_and_gradient(w.data(), bias);
  CHECK(g.loss == doctest::Approx(batch_loss(batch, w, bias, set)));
  const float h = 1e-2f;
  for (std::size_t k = 0; k < keys.size(); ++k) {
    std::vector<float> up = w;
    std::vector<float> down = w;
    up[k] += h;
    down[k] -= h;
    const double numeric = (batch_loss(batch, up, bias, set) - batch_loss(batch, down, bias, set)) /
                           (2.0 * h);
    CAPTURE(k);
    CHECK(g.rows[k] == doctest::Approx(numeric).epsilon(2e-3).scale(1e-3));
  }
  const double numeric_bias =
      (batch_loss(batch, w, bias + h, set) - batch_loss(batch, w, bias - h, set)) / (2.0 * h);
  CHECK(g.bias == doctest::Approx(numeric_bias).epsilon(2e-3).scale(1e-3));
}

TEST_CASE("log loss, AUC (ties count half) and accuracy of logits, by hand") {
  const std::vector<float> z{2.0f, -1.0f, 0.5f, 0.5f, -3.0f};
  const std::vector<std::uint8_t> y{1, 0, 1, 0, 1};
  const binary_metrics m = score_logits(z, y);
  const double expected_loss = (std::log1p(std::exp(-2.0)) + std::log1p(std::exp(-1.0)) +
                                std::log1p(std::exp(-0.5)) + std::log1p(std::exp(0.5)) +
                                std::log1p(std::exp(3.0))) / 5;
  CHECK(m.log_loss == doctest::Approx(expected_loss));
  // Pairs (positive, negative): (2,-1) (2,.5) (.5,-1) (.5,.5)=half (-3,-1) (-3,.5): 3.5 of 6.
  CHECK(m.auc == doctest::Approx(3.5 / 6));
  CHECK(m.accuracy == doctest::Approx(3.0 / 5));  // 2, -1 and the positive 0.5
  CHECK(m.positive_rate == doctest::Approx(0.6));
  CHECK(std::isnan(score_logits({1.0f}, {1}).auc));
  CHECK(logistic_loss(800.0, 0) == doctest::Approx(800.0));  // no overflow
  CHECK_THROWS_AS(score_logits({1.0f}, {}), std::invalid_argument);
}

TEST_CASE("the planted generator is deterministic, skewed, and keeps to its vocabulary") {
  planted_spec spec;
  spec.vocabulary = 1000;
  spec.informative = 100;
  spec.draws = 10;
  const planted_model model(spec);
  std::set<std::uint64_t> features;
  for (std::uint64_t r = 0; r < spec.vocabulary; ++r) features.insert(model.feature_of(r));
  CHECK(features.size() == 1000);
  CHECK(*features.rbegin() == 999);

  spec.vocabulary = std::uint64_t{1} << 24;
  spec.informative = 1 << 12;
  const planted_model big(spec);
  const sparse_examples a = planted_sampler(big, 0).next(20000);
  const sparse_examples again = planted_sampler(big, 0).next(20000);
  CHECK(a.keys == again.keys);
  CHECK(a.labels == again.labels);
  CHECK(planted_sampler(big, 1).next(100).keys != planted_sampler(big, 0).next(100).keys);
  std::size_t positives = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    positives += a.labels[i];
    CHECK(std::is_sorted(a.keys.begin() + a.offsets[i], a.keys.begin() + a.offsets[i + 1]));
  }
  CHECK(static_cast<double>(positives) / a.size() == doctest::Approx(0.25).epsilon(0.08));
  CHECK(*std::max_element(a.keys.begin(), a.keys.end()) < spec.vocabulary);
  // The most frequent feature is in most examples; most features seen are seen once.
  std::size_t top = 0;
  const std::uint64_t first = big.feature_of(0);
  for (std::uint64_t k : a.keys) top += k == first;
  CHECK(top > a.size() / 2);
  std::vector<std::uint64_t> sorted = a.keys;
  std::sort(sorted.begin(), sorted.end());
  std::size_t distinct = 0;
  std::size_t once = 0;
  for (std::size_t j = 0; j < sorted.size();) {
    std::size_t end = j;
    while (end < sorted.size() && sorted[end] == sorted[j]) ++end;
    ++distinct;
    once += end - j == 1;
    j = end;
  }
  MESSAGE(distinct << " distinct features in " << a.size() << " examples, " << once
                   << " seen once");
  CHECK(once > distinct / 2);
  spec.base_rate = 1.0;
  CHECK_THROWS_WITH_AS(planted_model{spec}, "planted model: base rate 1 (expected between 0 and 1)",
                       std::invalid_argument);
}

TEST_CASE("one pass over 200000 planted examples gets within 3% of the planted test log loss") {
  planted_spec spec;
  spec.vocabulary = std::uint64_t{1} << 20;
  spec.informative = 1 << 10;
  spec.weight_stddev = 0.4;
  const planted_model planted(spec);
  const sparse_examples train = planted_sampler(planted, 0).next(200000);
  const sparse_examples test = planted_sampler(planted, 1).next(50000);
  std::vector<float> best(test.size());
  for (std::size_t i = 0; i < test.size(); ++i) best[i] = static_cast<float>(planted.logit(test, i));
  const binary_metrics target = score_logits(best, test.labels);

  for (const auto& [optimizer, lr] : {std::pair{update_rule::adagrad, 0.3f},
                                     std::pair{update_rule::sgd, 1.0f}}) {
    logreg_settings settings;
    settings.rows = std::uint64_t{1} << 18;
    settings.optimizer = optimizer;
    settings.learning_rate = lr;
    logreg_trainer trainer(settings);
    trainer.train(train);
    const binary_metrics m = trainer.evaluate(test);
    const double gap = (m.log_loss - target.log_loss) / target.log_loss;
    MESSAGE(std::string(optimizer == update_rule::adagrad ? "adagrad" : "sgd")
            << ": test log loss " << m.log_loss << ", planted " << target.log_loss << ", gap "
            << 100 * gap << "%, AUC " << m.auc << " (planted " << target.auc << "), rows held "
            << trainer.weights().rows_held());
    CHECK(gap < 0.03);
    CHECK(m.auc > target.auc - 0.02);
  }
}

}  // namespace downpour::test_sparse_logreg
