// Each row rule against its formula written out here in double (TensorFlow
// 1.x's optimizers; FTRL-Proximal as McMahan et al. 2013 state it), over a
// few steps of gradients of both signs, with and without a regularizer.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "model/row_update.hpp"

namespace test_row_update {

using namespace downpour;

namespace {

constexpr std::size_t kDim = 3;
const std::vector<std::vector<double>> kGrads = {
    {0.5, -1.0, 0.0}, {0.25, 2.0, -0.125}, {-0.75, 0.5, 1.5}, {1.0, -0.25, 0.0625}};
const std::vector<double> kStart = {0.1, -0.2, 0.0};

struct golden_row {
  std::vector<double> w = kStart;
  std::vector<double> s0 = std::vector<double>(kDim, 0.0);
  std::vector<double> s1 = std::vector<double>(kDim, 0.0);
};

double sign(double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); }

// The rule's step on one coordinate, from the papers' and TF's formulas.
void golden_step(const update_spec& s, double lr, int t, golden_row& r, std::size_t j, double g) {
  double& w = r.w[j];
  switch (s.rule) {
    case update_rule::sgd: w -= lr * g; break;
    case update_rule::momentum: r.s0[j] = s.momentum * r.s0[j] + g; w -= lr * r.s0[j]; break;
    case update_rule::adagrad: r.s0[j] += g * g; w -= lr * g / std::sqrt(r.s0[j]); break;
    case update_rule::adam: {
      r.s0[j] = s.beta1 * r.s0[j] + (1 - s.beta1) * g;
      r.s1[j] = s.beta2 * r.s1[j] + (1 - s.beta2) * g * g;
      // TF's AdamOptimizer docs: lr_t = lr sqrt(1 - b2^t) / (1 - b1^t).
      const double lr_t =
          lr * std::sqrt(1 - std::pow(double{s.beta2}, t)) / (1 - std::pow(double{s.beta1}, t));
      w -= lr_t * r.s0[j] / (std::sqrt(r.s1[j]) + s.epsilon);
      break;
    }
    case update_rule::ftrl: {  // McMahan 2013, Algorithm 1, alpha = lr, beta = 0
      double& n = r.s0[j];
      double& z = r.s1[j];
      const double sigma = (std::sqrt(n + g * g) - std::sqrt(n)) / lr;
      z += g - sigma * w;
      n += g * g;
      const double l1 = s.ftrl_l1;
      const double l2 = 2.0 * s.ftrl_l2;  // TF's l2 is half McMahan's lambda2
      w = std::abs(z) <= l1 ? 0.0 : -(z - sign(z) * l1) / (std::sqrt(n) / lr + l2);
      break;
    }
  }
}

// kGrads applied by row_update and by the golden formulas; the largest
// difference of the values and slots.
double run(const update_spec& spec, const regularizer& reg, float lr) {
  golden_row gold;
  if (spec.rule == update_rule::adagrad || spec.rule == update_rule::ftrl)
    gold.s0.assign(kDim, spec.initial_accumulator);
  std::vector<float> w(kStart.begin(), kStart.end());
  std::vector<float> slots(slots_of(spec.rule) * kDim);
  fill_initial_slots(spec, slots.data(), kDim);
  double worst = 0.0;
  for (std::size_t step = 0; step < kGrads.size(); ++step) {
    std::vector<float> g(kGrads[step].begin(), kGrads[step].end());
    row_update(spec, reg, lr, static_cast<std::int64_t>(step)).apply(w.data(), slots.data(),
                                                                      g.data(), kDim);
    for (std::size_t j = 0; j < kDim; ++j) {
      const double gj = kGrads[step][j] + reg.l1 * sign(gold.w[j]) + reg.l2 * gold.w[j];
      golden_step(spec, spec.learning_rate > 0 ? spec.learning_rate : lr,
                  static_cast<int>(step) + 1, gold, j, gj);
      worst = std::max(worst, std::abs(w[j] - gold.w[j]));
      if (!slots.empty()) worst = std::max(worst, std::abs(slots[j] - gold.s0[j]));
      if (slots.size() > kDim) worst = std::max(worst, std::abs(slots[kDim + j] - gold.s1[j]));
    }
  }
  return worst;
}

}  // namespace

TEST_CASE("sgd and momentum rows follow TensorFlow's formulas") {
  CHECK(run({update_rule::sgd}, {}, 0.1f) < 1e-6);
  CHECK(run({update_rule::momentum}, {}, 0.1f) < 1e-6);
  update_spec heavy{update_rule::momentum};
  heavy.momentum = 0.5f;
  CHECK(run(heavy, {}, 0.3f) < 1e-6);
}

TEST_CASE("adagrad rows follow TensorFlow's formula from the initial accumulator") {
  CHECK(run({update_rule::adagrad}, {}, 0.1f) < 1e-6);
  update_spec spec{update_rule::adagrad};
  spec.initial_accumulator = 1.0f;
  CHECK(run(spec, {}, 0.5f) < 1e-6);
}

TEST_CASE("adam rows follow the lazy Adam formula with the bias correction of the step") {
  CHECK(run({update_rule::adam}, {}, 0.01f) < 1e-6);
  update_spec spec{update_rule::adam};
  spec.beta1 = 0.5f;
  spec.beta2 = 0.75f;
  spec.epsilon = 0.1f;
  CHECK(run(spec, {}, 0.2f) < 1e-6);
}

TEST_CASE("ftrl rows follow FTRL-Proximal, with L1 making small weights exactly zero") {
  CHECK(run({update_rule::ftrl}, {}, 0.1f) < 1e-6);
  update_spec spec{update_rule::ftrl};
  spec.ftrl_l1 = 0.3f;
  spec.ftrl_l2 = 0.2f;
  CHECK(run(spec, {}, 0.5f) < 1e-6);
  // A gradient too small to pass l1 leaves the weight at exactly 0.
  std::vector<float> w = {0.0f};
  std::vector<float> slots(2);
  fill_initial_slots(spec, slots.data(), 1);
  const float g = 0.25f;
  row_update(spec, {}, 0.5f, 0).apply(w.data(), slots.data(), &g, 1);
  CHECK(w[0] == 0.0f);
  CHECK(slots[1] == 0.25f);  // z
}

TEST_CASE("a variable's regularizer adds l1 sign(w) + l2 w to the gradient of every rule") {
  const regularizer reg{0.01f, 0.1f};
  for (auto rule : {update_rule::sgd, update_rule::momentum, update_rule::adagrad,
                    update_rule::adam, update_rule::ftrl})
    CHECK(run({rule}, reg, 0.1f) < 1e-6);
}

TEST_CASE("a variable's own learning rate replaces the job's") {
  update_spec spec{update_rule::sgd};
  spec.learning_rate = 0.5f;
  CHECK(row_update(spec, {}, 0.1f, 0).learning_rate() == 0.5f);
  CHECK(run(spec, {}, 0.1f) < 1e-6);
  CHECK(row_update({update_rule::sgd}, {}, 0.1f, 0).learning_rate() == 0.1f);
}

}  // namespace test_row_update
