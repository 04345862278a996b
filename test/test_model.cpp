#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "model/init.hpp"
#include "model/mlp.hpp"
#include "model/schedule.hpp"

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

TEST_CASE("the gradient matches central finite differences for every variable") {
  model_shape s{7, 6, 4};
  const float l2 = 0.05f;  // large so the L2 part of the gradient is visible
  auto b = random_batch(s, 5, 11);
  auto params = random_params(s, 12);
  mlp_workspace ws(s, b.size, l2);
  std::vector<float> grad(s.size());
  ws.loss_and_gradient(params.data(), b, grad.data());
  const float eps = 1e-2f;
  std::size_t checked = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    auto p = params;
    p[i] = params[i] + eps;
    double up = ws.loss(p.data(), b);
    p[i] = params[i] - eps;
    double down = ws.loss(p.data(), b);
    double numeric = (up - down) / (2.0 * eps);
    CAPTURE(i);
    CHECK(grad[i] == doctest::Approx(numeric).epsilon(0.02).scale(1.0));
    ++checked;
  }
  CHECK(checked == s.size());
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
  apply_mean_sgd(p.data(), sum.data(), 2, 0.5f, 2);
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
