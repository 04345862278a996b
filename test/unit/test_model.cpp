// The MLP's numerics: gradients against central differences in double (one
// and two hidden layers, and none: softmax regression), float against
// double, the L2 term, stable logits; the schedule and the update kernels.
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

namespace test_model {

using namespace downpour;

namespace {

model_layout layout_of(const mlp_spec& s) { return s.layout("mlp"); }

batch random_batch(const mlp_spec& s, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  batch b;
  b.size = n;
  b.input_size = s.input;
  for (std::size_t i = 0; i < n * s.input; ++i) b.x.push_back(u(rng));
  for (std::size_t i = 0; i < n; ++i) b.y.push_back(static_cast<std::int32_t>(rng() % s.classes));
  return b;
}

std::vector<float> random_params(const mlp_spec& s, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> nd(0.0f, 0.5f);
  std::vector<float> p(layout_of(s).size());
  for (auto& v : p) v = nd(rng);
  return p;
}

std::vector<double> to_double(const std::vector<float>& v) {
  return std::vector<double>(v.begin(), v.end());
}

std::vector<std::size_t> all_entries(const mlp_spec& s) {
  std::vector<std::size_t> all(layout_of(s).size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  return all;
}

// per_variable entries of each variable (all of a smaller one), fixed by seed.
std::vector<std::size_t> sampled_entries(const mlp_spec& s, std::size_t per_variable,
                                         std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::size_t> picked;
  const model_layout layout = layout_of(s);
  for (const auto& v : layout.variables())
    for (std::size_t k = 0; k < std::min(per_variable, v.size()); ++k)
      picked.push_back(v.offset + (v.size() <= per_variable ? k : rng() % v.size()));
  return picked;
}

struct gradient_check {
  std::size_t checked = 0, skipped = 0, failed = 0;
};

// The central difference of the loss in entry i with step h.
double central_difference(basic_mlp_workspace<double>& ws, std::vector<double>& params,
                          const batch& b, std::size_t i, double h) {
  const double kept = params[i];
  params[i] = kept + h;
  const double up = ws.loss(params.data(), b);
  params[i] = kept - h;
  const double down = ws.loss(params.data(), b);
  params[i] = kept;
  return (up - down) / (2 * h);
}

// An entry whose gradient disagrees is a failure unless a ReLU kink lies
// within twice the step: the loss is piecewise smooth, so there the central
// differences of step h and 2h disagree with each other as well, while
// elsewhere they agree to about 1e-10.
gradient_check check_gradient(const mlp_spec& s, const batch& b, std::vector<double> params,
                              double l2, const std::vector<std::size_t>& entries) {
  const double step = 1e-6, relative = 1e-3, floor = 1e-8;
  auto off = [&](double x, double y) { return std::abs(x - y) > relative * std::abs(y) + floor; };
  basic_mlp_workspace<double> ws(s, b.size, l2);
  std::vector<double> grad(params.size());
  ws.loss_and_gradient(params.data(), b, grad.data());
  gradient_check r;
  double worst = 0.0;
  for (std::size_t i : entries) {
    const double numeric = central_difference(ws, params, b, i, step);
    if (off(grad[i], numeric) && off(central_difference(ws, params, b, i, 2 * step), numeric)) {
      ++r.skipped;
      continue;
    }
    worst = std::max(worst, std::abs(grad[i] - numeric) / (std::abs(numeric) + floor));
    ++r.checked;
    if (off(grad[i], numeric)) {
      ++r.failed;
      MESSAGE("entry " << i << ": gradient " << grad[i] << ", central difference " << numeric);
    }
  }
  MESSAGE(r.checked << " entries checked, " << r.skipped << " next to a ReLU kink skipped, "
                    << "worst relative difference " << worst);
  return r;
}

// A batch of the real data (Fashion-MNIST's first training examples after
// a shuffle by seed).
batch fashion_batch(std::size_t n, std::uint64_t seed) {
  static const data_splits data = load_mnist(DOWNPOUR_DEFAULT_DATA_DIR, 5000);
  batcher batches(data.train, n, seed);
  return batches.next_batch();
}

}  // namespace

TEST_CASE("the MLP's flat buffer holds its variables in TensorFlow's creation order") {
  const model_layout seed = mlp_spec{}.layout("mlp");
  CHECK(seed.to_string() == "mlp 784-500-10");
  CHECK(seed.size() == 397510);
  const std::vector<std::pair<std::string, std::size_t>> expected = {
      {"layer1/weights", 0}, {"layer1/biases", 392000}, {"layer2/weights", 392500},
      {"layer2/biases", 397500}};
  REQUIRE(seed.variables().size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CHECK(seed.variables()[i].name == expected[i].first);
    CHECK(seed.variables()[i].offset == expected[i].second);
  }
  const model_layout deeper = mlp_spec{784, {500, 300}, 10}.layout("mlp");
  CHECK(deeper.to_string() == "mlp 784-500-300-10");
  CHECK(deeper.variables_text() ==
        "layer1/weights 784x500,layer1/biases 1x500,layer2/weights 500x300,layer2/biases 1x300,"
        "layer3/weights 300x10,layer3/biases 1x10");
  const model_layout softmax = mlp_spec{784, {}, 10}.layout("softmax");
  CHECK(softmax.variables_text() == "layer1/weights 784x10,layer1/biases 1x10");
}

// The gradient check runs the model's own code instantiated in double, so
// central differences are accurate to about 1e-10 (step 1e-6: truncation
// error ~1e-12, cancellation ~1e-16 / 1e-6 of a loss near 1), far below the
// 1e-3 relative tolerance; the 1e-8 absolute floor only covers gradients
// that are zero. Entries next to a ReLU kink are skipped (and counted: they
// must stay few; softmax regression has none).
TEST_CASE("in double, every gradient entry of a small net matches central differences") {
  for (const mlp_spec& s : {mlp_spec{7, {6}, 4}, mlp_spec{7, {6, 5}, 4}, mlp_spec{7, {}, 4}}) {
    CAPTURE(s.text());
    auto b = random_batch(s, 5, 11);
    auto params = to_double(random_params(s, 12));
    const std::size_t n = params.size();
    // l2 large, so that a wrong L2 gradient cannot hide below the tolerance.
    auto result = check_gradient(s, b, params, 0.05, all_entries(s));
    CHECK(result.checked + result.skipped == n);
    CHECK(result.skipped <= (s.hidden.empty() ? 0 : n / 20));
    CHECK(result.failed == 0);
  }
}

TEST_CASE("in double, sampled gradient entries at the real layer sizes match central differences") {
  // The job's initial parameters on batches of Fashion-MNIST: the seed's
  // 784-500-10, two hidden layers (500,300) and softmax regression.
  struct net {
    mlp_spec spec;
    std::size_t batch_size;
  };
  for (const net& n : {net{mlp_spec{}, 100}, net{mlp_spec{784, {500, 300}, 10}, 10},
                       net{mlp_spec{784, {}, 10}, 100}}) {
    CAPTURE(n.spec.text());
    const batch b = fashion_batch(n.batch_size, 7);
    auto params = to_double(initial_parameters(layout_of(n.spec), 3));
    auto entries = sampled_entries(n.spec, 30, 5);
    auto result = check_gradient(n.spec, b, params, 1e-4, entries);
    CHECK(result.checked + result.skipped == entries.size());
    CHECK(result.skipped * 10 <= result.checked);
    CHECK(result.failed == 0);
  }
}

TEST_CASE("the float gradient is the double gradient up to float rounding") {
  const batch b = fashion_batch(100, 8);
  for (const mlp_spec& s : {mlp_spec{}, mlp_spec{784, {500, 300}, 10}}) {
    CAPTURE(s.text());
    auto params = initial_parameters(layout_of(s), 4);
    std::vector<float> grad(params.size());
    mlp_workspace(s, 100, 1e-4f).loss_and_gradient(params.data(), b, grad.data());
    auto exact = to_double(params);
    std::vector<double> grad_exact(params.size());
    basic_mlp_workspace<double>(s, 100, 1e-4).loss_and_gradient(exact.data(), b,
                                                                 grad_exact.data());
    // Float sums of 100 to 784 terms: a few 1e-7 of the largest entry of the
    // variable; 1e-5 of it bounds that and still refuses any wrong term.
    const model_layout layout = layout_of(s);
    for (const auto& v : layout.variables()) {
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
}

TEST_CASE("the loss includes l2 times half the squared weights but not the biases") {
  const mlp_spec s{3, {2}, 2};
  batch b = random_batch(s, 2, 3);
  std::vector<float> params(layout_of(s).size(), 0.0f);
  mlp_workspace plain(s, 2, 0.0f), reg(s, 2, 0.5f);
  const model_layout layout = layout_of(s);
  for (auto& v : layout.variables())
    for (std::size_t i = 0; i < v.size(); ++i) params[v.offset + i] = v.regularized ? 0.0f : 3.0f;
  CHECK(reg.loss(params.data(), b) == doctest::Approx(plain.loss(params.data(), b)));
  params[0] = 2.0f;  // a layer-1 weight: adds 0.5 * 4 / 2 = 1
  CHECK(reg.loss(params.data(), b) - plain.loss(params.data(), b) == doctest::Approx(1.0));
}

TEST_CASE("softmax cross-entropy with logits of 1e4 is finite") {
  const mlp_spec s{1, {1}, 2};
  batch b;
  b.size = 1;
  b.input_size = 1;
  b.x = {1.0f};
  b.y = {1};
  // w1 = 1, b1 = 0, w2 = [1e4, -1e4]: logits (1e4, -1e4), label 1 -> loss 2e4.
  std::vector<float> params = {1.0f, 0.0f, 1e4f, -1e4f, 0.0f, 0.0f};
  mlp_workspace ws(s, 1, 0.0f);
  std::vector<float> grad(params.size());
  float loss = ws.loss_and_gradient(params.data(), b, grad.data());
  CHECK(std::isfinite(loss));
  CHECK(loss == doctest::Approx(2e4));
  for (float g : grad) CHECK(std::isfinite(g));
}

// got within rel of want, relative to want: the rates are 0.01-sized, where
// an absolute 1e-6 would pass a schedule off by 1e-4 of its value.
bool within_relative(double got, double want, double rel) {
  return std::fabs(got - want) <= rel * std::fabs(want);
}

TEST_CASE("the learning rate decays continuously as 0.01 * 0.99^(step/600) at every step") {
  lr_schedule s;
  CHECK(learning_rate_at(s, 0) == 0.01f);
  // float32 as TF computes it: within 1e-6 of the exact value up to step 30000
  // (0.99f differs from 0.99 by 1e-8, compounded 50 times there).
  for (std::int64_t step = 0; step <= 30000; step += 7) {
    CAPTURE(step);
    CHECK(within_relative(learning_rate_at(s, step), 0.01 * std::pow(0.99, step / 600.0), 1e-6));
  }
  const lr_schedule other{0.5f, 0.5f, 100, false};
  for (std::int64_t step = 0; step <= 1000; step += 13) {
    CAPTURE(step);
    CHECK(within_relative(learning_rate_at(other, step), 0.5 * std::pow(0.5, step / 100.0), 1e-6));
  }
}

TEST_CASE("a staircase learning rate drops by the decay rate exactly at each multiple of decay-steps") {
  lr_schedule s;
  s.staircase = true;
  for (std::int64_t period = 0; period < 40; ++period) {
    const double want = 0.01 * std::pow(0.99, static_cast<double>(period));
    for (std::int64_t step : {period * 600, period * 600 + 1, period * 600 + 599}) {
      CAPTURE(step);
      CHECK(within_relative(learning_rate_at(s, step), want, 1e-6));
    }
  }
  CHECK(learning_rate_at(s, 599) == 0.01f);
  CHECK(learning_rate_at(s, 600) < 0.01f);
}

TEST_CASE("the EMA decay is min(0.99, (1+step)/(10+step)): from 0.1, capped from step 890 on") {
  for (std::int64_t step = 0; step <= 2000; ++step) {
    CAPTURE(step);
    const double want = std::min(0.99, (1.0 + step) / (10.0 + step));
    CHECK(within_relative(ema_decay_at(0.99f, step), want, 1e-6));
  }
  CHECK(ema_decay_at(0.99f, 0) == doctest::Approx(0.1).epsilon(1e-7));
  CHECK(ema_decay_at(0.99f, 889) < 0.99f);  // (1+889)/(10+889) = 0.98999
  for (std::int64_t step : {890, 891, 1000, 20000, 1000000}) CHECK(ema_decay_at(0.99f, step) == 0.99f);
  // Another decay caps where (1+n)/(10+n) reaches it: 0.5 at step 8.
  CHECK(ema_decay_at(0.5f, 7) == doctest::Approx(8.0 / 17.0).epsilon(1e-7));
  CHECK(ema_decay_at(0.5f, 8) == 0.5f);
  CHECK(ema_decay_at(0.5f, 100) == 0.5f);
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
  const model_layout s = mlp_spec{}.layout("mlp");
  auto p = initial_parameters(s, 42);
  const auto& vars = s.variables();
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

}  // namespace test_model
