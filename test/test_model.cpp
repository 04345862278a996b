#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "data/batcher.hpp"
#include "data/idx.hpp"
#include "model/init.hpp"
#include "model/mlp.hpp"
#include "model/schedule.hpp"
#include "model/update.hpp"

using namespace downpour;

namespace {

batch random_batch(const model_shape& s, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  batch b;
  b.size = n;
  b.input_size = s.input;
  for (std::size_t i = 0; i < n * s.input; ++i) b.x.push_back(u(rng));
  for (std::size_t i = 0; i < n; ++i) b.y.push_back(static_cast<std::int32_t>(rng() % s.classes));
  return b;
}

std::vector<float> random_params(const model_shape& s, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> nd(0.0f, 0.5f);
  std::vector<float> p(s.size());
  for (auto& v : p) v = nd(rng);
  return p;
}

std::vector<double> to_double(const std::vector<float>& v) {
  return std::vector<double>(v.begin(), v.end());
}

std::vector<std::size_t> all_entries(const model_shape& s) {
  std::vector<std::size_t> all(s.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  return all;
}

// per_variable entries of each variable (all of a smaller one), fixed by seed.
std::vector<std::size_t> sampled_entries(const model_shape& s, std::size_t per_variable,
                                         std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::size_t> picked;
  for (const auto& v : s.variables())
    for (std::size_t k = 0; k < std::min(per_variable, v.size()); ++k)
      picked.push_back(v.offset + (v.size() <= per_variable ? k : rng() % v.size()));
  return picked;
}

// The hidden layer's inputs x W1 + b1 (batch x hidden), for finding kinks.
std::vector<double> hidden_inputs(const model_shape& s, const std::vector<double>& p,
                                  const batch& b) {
  std::vector<double> z(b.size * s.hidden);
  for (std::size_t n = 0; n < b.size; ++n)
    for (std::size_t j = 0; j < s.hidden; ++j) {
      double sum = p[s.input * s.hidden + j];
      for (std::size_t a = 0; a < s.input; ++a)
        sum += double(b.x[n * s.input + a]) * p[a * s.hidden + j];
      z[n * s.hidden + j] = sum;
    }
  return z;
}

// True if moving entry i by +-step can switch a ReLU on or off: a hidden
// input it feeds lies within twice what the step moves it of zero.
bool near_kink(const model_shape& s, const std::vector<double>& z, const batch& b, std::size_t i,
               double step) {
  const std::size_t bias_at = s.input * s.hidden;
  if (i >= bias_at + s.hidden) return false;  // layer 2 is linear in its parameters
  const std::size_t j = i < bias_at ? i % s.hidden : i - bias_at;
  for (std::size_t n = 0; n < b.size; ++n) {
    const double moved = i < bias_at ? step * std::abs(b.x[n * s.input + i / s.hidden]) : step;
    if (std::abs(z[n * s.hidden + j]) <= 2 * moved) return true;
  }
  return false;
}

struct gradient_check {
  std::size_t checked = 0, skipped = 0, failed = 0;
};

gradient_check check_gradient(const model_shape& s, const batch& b, std::vector<double> params,
                              double l2, const std::vector<std::size_t>& entries) {
  const double step = 1e-6, relative = 1e-3, floor = 1e-8;
  basic_mlp_workspace<double> ws(s, b.size, l2);
  std::vector<double> grad(s.size());
  ws.loss_and_gradient(params.data(), b, grad.data());
  const auto z = hidden_inputs(s, params, b);
  gradient_check r;
  double worst = 0.0;
  for (std::size_t i : entries) {
    if (near_kink(s, z, b, i, step)) {
      ++r.skipped;
      continue;
    }
    const double kept = params[i];
    params[i] = kept + step;
    const double up = ws.loss(params.data(), b);
    params[i] = kept - step;
    const double down = ws.loss(params.data(), b);
    params[i] = kept;
    const double numeric = (up - down) / (2 * step);
    const double diff = std::abs(grad[i] - numeric);
    worst = std::max(worst, diff / (std::abs(numeric) + floor));
    ++r.checked;
    if (diff > relative * std::abs(numeric) + floor) {
      ++r.failed;
      MESSAGE("entry " << i << ": gradient " << grad[i] << ", central difference " << numeric);
    }
  }
  MESSAGE(r.checked << " entries checked, " << r.skipped << " next to a ReLU kink skipped, "
                    << "worst relative difference " << worst);
  return r;
}

}  // namespace

TEST_CASE("the flat buffer holds the four variables in TensorFlow's creation order") {
  model_shape s;
  auto vars = s.variables();
  REQUIRE(vars.size() == 4);
  CHECK(s.size() == 397510);
  CHECK(vars[0].name == "layer1/weights");
  CHECK(vars[0].offset == 0);
  CHECK(vars[1].name == "layer1/biases");
  CHECK(vars[1].offset == 392000);
  CHECK(vars[2].name == "layer2/weights");
  CHECK(vars[2].offset == 392500);
  CHECK(vars[3].name == "layer2/biases");
  CHECK(vars[3].offset == 397500);
}

// The gradient check runs the model's own code instantiated in double, so
// central differences are accurate to about 1e-10 (step 1e-6: truncation
// error ~1e-12, cancellation ~1e-16 / 1e-6 of a loss near 1), far below the
// 1e-3 relative tolerance; the 1e-8 absolute floor only covers gradients
// that are zero. A ReLU whose input lies within the step of zero makes the
// loss kinked there, so entries feeding such a unit are skipped (and counted:
// they must stay few).
TEST_CASE("in double, every gradient entry of a small net matches central differences") {
  model_shape s{7, 6, 4};
  auto b = random_batch(s, 5, 11);
  auto params = to_double(random_params(s, 12));
  // l2 large, so that a wrong L2 gradient cannot hide below the tolerance.
  auto result = check_gradient(s, b, params, 0.05, all_entries(s));
  CHECK(result.checked + result.skipped == s.size());
  CHECK(result.skipped <= s.size() / 20);
  CHECK(result.failed == 0);
}

TEST_CASE("in double, sampled gradient entries at the real layer sizes match central differences") {
  model_shape s;  // 784-500-10, batch 100 of Fashion-MNIST, the job's initial parameters
  auto data = load_mnist(DOWNPOUR_DEFAULT_DATA_DIR, 5000);
  batcher batches(nullptr, data->train, 100, 7);
  const batch& b = batches.next_batch();
  auto params = to_double(initial_parameters(s, 3));
  auto result = check_gradient(s, b, params, 1e-4, sampled_entries(s, 40, 5));
  CHECK(result.checked + result.skipped == 3 * 40 + 10);
  CHECK(result.skipped * 10 <= result.checked);
  CHECK(result.failed == 0);
}

TEST_CASE("the float gradient is the double gradient up to float rounding") {
  model_shape s;
  auto data = load_mnist(DOWNPOUR_DEFAULT_DATA_DIR, 5000);
  batcher batches(nullptr, data->train, 100, 8);
  const batch& b = batches.next_batch();
  auto params = initial_parameters(s, 4);
  std::vector<float> grad(s.size());
  mlp_workspace(s, 100, 1e-4f).loss_and_gradient(params.data(), b, grad.data());
  auto exact = to_double(params);
  std::vector<double> grad_exact(s.size());
  basic_mlp_workspace<double>(s, 100, 1e-4).loss_and_gradient(exact.data(), b, grad_exact.data());
  // Float sums of 100 to 784 terms: a few 1e-7 of the largest entry of the
  // variable; 1e-5 of it bounds that and still refuses any wrong term.
  for (const auto& v : s.variables()) {
    double largest = 0.0, worst = 0.0;
    for (std::size_t i = v.offset; i < v.offset + v.size(); ++i) {
      largest = std::max(largest, std::abs(grad_exact[i]));
      worst = std::max(worst, std::abs(grad[i] - grad_exact[i]));
    }
    CAPTURE(v.name);
    MESSAGE(v.name << ": worst difference " << worst / largest << " of the largest entry");
    CHECK(largest > 0.0);
    CHECK(worst <= 1e-5 * largest);
  }
}

TEST_CASE("the loss includes l2 times half the squared weights but not the biases") {
  model_shape s{3, 2, 2};
  batch b = random_batch(s, 2, 3);
  std::vector<float> params(s.size(), 0.0f);
  mlp_workspace plain(s, 2, 0.0f), reg(s, 2, 0.5f);
  for (auto& v : s.variables())
    for (std::size_t i = 0; i < v.size(); ++i) params[v.offset + i] = v.regularized ? 0.0f : 3.0f;
  CHECK(reg.loss(params.data(), b) == doctest::Approx(plain.loss(params.data(), b)));
  params[0] = 2.0f;  // a layer-1 weight: adds 0.5 * 4 / 2 = 1
  CHECK(reg.loss(params.data(), b) - plain.loss(params.data(), b) == doctest::Approx(1.0));
}

TEST_CASE("softmax cross-entropy with logits of 1e4 is finite") {
  model_shape s{1, 1, 2};
  batch b;
  b.size = 1;
  b.input_size = 1;
  b.x = {1.0f};
  b.y = {1};
  // w1 = 1, b1 = 0, w2 = [1e4, -1e4]: logits (1e4, -1e4), label 1 -> loss 2e4.
  std::vector<float> params = {1.0f, 0.0f, 1e4f, -1e4f, 0.0f, 0.0f};
  mlp_workspace ws(s, 1, 0.0f);
  std::vector<float> grad(s.size());
  float loss = ws.loss_and_gradient(params.data(), b, grad.data());
  CHECK(std::isfinite(loss));
  CHECK(loss == doctest::Approx(2e4));
  for (float g : grad) CHECK(std::isfinite(g));
}

TEST_CASE("the learning rate decays continuously as 0.01 * 0.99^(step/600)") {
  lr_schedule s;
  CHECK(learning_rate_at(s, 0) == 0.01f);
  CHECK(learning_rate_at(s, 1) == doctest::Approx(0.01 * std::pow(0.99, 1.0 / 600)).epsilon(1e-6));
  CHECK(learning_rate_at(s, 100) == doctest::Approx(0.01 * std::pow(0.99, 100.0 / 600)).epsilon(1e-6));
  CHECK(learning_rate_at(s, 20000) ==
        doctest::Approx(0.01 * std::pow(0.99, 20000.0 / 600)).epsilon(1e-6));
  s.staircase = true;
  CHECK(learning_rate_at(s, 599) == 0.01f);
  CHECK(learning_rate_at(s, 1200) == doctest::Approx(0.01 * 0.99 * 0.99).epsilon(1e-6));
}

TEST_CASE("the EMA decay is min(0.99, (1+step)/(10+step))") {
  CHECK(ema_decay_at(0.99f, 0) == doctest::Approx(0.1));
  CHECK(ema_decay_at(0.99f, 1) == doctest::Approx(2.0 / 11.0));
  CHECK(ema_decay_at(0.99f, 100) == doctest::Approx(101.0 / 110.0));
  CHECK(ema_decay_at(0.99f, 20000) == 0.99f);
  float shadow = 1.0f, var = 0.0f;
  update_ema(&shadow, &var, 1, 0.1f);
  CHECK(shadow == doctest::Approx(0.1));  // shadow -= (1-d)(shadow-var)
}

TEST_CASE("the mean update of summed gradients equals the update by their mean") {
  std::vector<float> p = {1.0f, 2.0f}, sum = {4.0f, -2.0f};
  mean_sgd_into(p.data(), p.data(), sum.data(), 2, 0.5f, 2);
  CHECK(p[0] == doctest::Approx(0.0));
  CHECK(p[1] == doctest::Approx(2.5));
}

TEST_CASE("truncated-normal weights stay within two stddev with std near 0.088") {
  model_shape s;
  auto p = initial_parameters(s, 42);
  auto vars = s.variables();
  double sum = 0, sq = 0;
  std::size_t n = 0;
  for (auto& v : vars) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      float x = p[v.offset + i];
      if (!v.regularized) {
        CHECK(x == 0.0f);
        continue;
      }
      REQUIRE(std::abs(x) <= 0.2f);
      sum += x;
      sq += double(x) * x;
      ++n;
    }
  }
  double mean = sum / n, sd = std::sqrt(sq / n - mean * mean);
  CHECK(std::abs(mean) < 0.001);
  CHECK(sd == doctest::Approx(0.08796).epsilon(0.01));
  CHECK(initial_parameters(s, 42) == p);
  CHECK(initial_parameters(s, 43) != p);
}
