#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "model/cnn.hpp"

namespace test_cnn {

using namespace downpour;

namespace {

// 8x8 images of 2 channels, 3x3 kernels: every entry of every variable is
// checked in well under a second.
cnn_shape small_shape() {
  cnn_shape s;
  s.height = 8;
  s.width = 8;
  s.channels = 2;
  s.kernel = 3;
  s.filters1 = 3;
  s.filters2 = 4;
  s.classes = 3;
  return s;
}

std::size_t features(const cnn_shape& s) { return s.height * s.width * s.channels; }

std::size_t parameter_count(const cnn_shape& s) {
  std::size_t n = 0;
  for (const auto& v : s.variables()) n += v.rows * v.cols;
  return n;
}

batch random_batch(const cnn_shape& s, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> pixel(0.0f, 1.0f);
  batch b;
  b.size = n;
  b.input_size = features(s);
  for (std::size_t i = 0; i < n * b.input_size; ++i) b.x.push_back(pixel(rng));
  for (std::size_t i = 0; i < n; ++i) b.y.push_back(static_cast<std::int32_t>(rng() % s.classes));
  return b;
}

// Each variable drawn with its own initializer's spread (biases with 0.1),
// so that activations neither vanish nor saturate the softmax.
std::vector<double> random_params(const cnn_shape& s, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> p;
  for (const auto& v : s.variables()) {
    std::normal_distribution<double> normal(0.0, v.regularized ? v.init.stddev : 0.1);
    for (std::size_t i = 0; i < v.rows * v.cols; ++i) p.push_back(normal(rng));
  }
  return p;
}

// per_variable entries of each variable (all of a smaller one), fixed by seed.
std::vector<std::size_t> sampled_entries(const cnn_shape& s, std::size_t per_variable,
                                         std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::size_t> picked;
  std::size_t offset = 0;
  for (const auto& v : s.variables()) {
    const std::size_t size = v.rows * v.cols;
    for (std::size_t k = 0; k < std::min(per_variable, size); ++k)
      picked.push_back(offset + (size <= per_variable ? k : rng() % size));
    offset += size;
  }
  return picked;
}

// The network written as plain loops from its definition, independent of
// im2col and the pooling kernels: a SAME convolution with HWIO filters on
// NHWC images plus bias, 2x2 max pooling, ReLU; twice; then the dense layer.
std::vector<double> direct_logits(const cnn_shape& s, const std::vector<double>& p,
                                  const batch& b) {
  const auto vars = s.variables();
  std::vector<std::size_t> at(1, 0);
  for (const auto& v : vars) at.push_back(at.back() + v.rows * v.cols);
  auto block = [&](const std::vector<double>& in, std::size_t h, std::size_t w,
                   std::size_t cin, std::size_t cout, std::size_t var) {
    const long k = static_cast<long>(s.kernel), pad = k / 2;
    std::vector<double> conv(h * w * cout), out((h / 2) * (w / 2) * cout, 0.0);
    for (long y = 0; y < long(h); ++y)
      for (long x = 0; x < long(w); ++x)
        for (std::size_t o = 0; o < cout; ++o) {
          double sum = p[at[var + 1] + o];
          for (long ky = 0; ky < k; ++ky)
            for (long kx = 0; kx < k; ++kx)
              for (std::size_t c = 0; c < cin; ++c) {
                const long sy = y + ky - pad, sx = x + kx - pad;
                if (sy < 0 || sx < 0 || sy >= long(h) || sx >= long(w)) continue;
                sum += in[(sy * w + sx) * cin + c] * p[at[var] + ((ky * k + kx) * cin + c) * cout + o];
              }
          conv[(y * w + x) * cout + o] = sum;
        }
    for (std::size_t y = 0; y < h; ++y)
      for (std::size_t x = 0; x < w; ++x)
        for (std::size_t o = 0; o < cout; ++o) {
          double& pooled = out[((y / 2) * (w / 2) + x / 2) * cout + o];
          pooled = std::max(pooled, conv[(y * w + x) * cout + o]);  // starts at 0: the ReLU
        }
    return out;
  };
  std::vector<double> logits;
  for (std::size_t i = 0; i < b.size; ++i) {
    std::vector<double> image(b.x.begin() + i * features(s), b.x.begin() + (i + 1) * features(s));
    auto a1 = block(image, s.height, s.width, s.channels, s.filters1, 0);
    auto a2 = block(a1, s.height / 2, s.width / 2, s.filters1, s.filters2, 2);
    for (std::size_t c = 0; c < s.classes; ++c) {
      double sum = p[at[5] + c];
      for (std::size_t j = 0; j < a2.size(); ++j) sum += a2[j] * p[at[4] + j * s.classes + c];
      logits.push_back(sum);
    }
  }
  return logits;
}

struct gradient_check {
  std::size_t checked = 0, skipped = 0, failed = 0;
};

// Central differences in double (step 1e-6: truncation ~1e-12, cancellation
// ~1e-10) against a 1e-4 relative tolerance. Where a ReLU or a pooling
// window's maximum switches inside the step, the loss has a kink and the
// central difference is off by half the second difference over the step:
// such entries are skipped when that bound exceeds the tolerance. The test
// reads only loss() for it, so a wrong gradient cannot cause a skip, and the
// skipped entries are counted (they must stay few).
gradient_check check_gradient(const cnn_shape& s, const batch& b, std::vector<double> params,
                              double l2, const std::vector<std::size_t>& entries) {
  const double step = 1e-6, relative = 1e-4, floor = 1e-9;
  basic_cnn_workspace<double> ws(s, b.size, l2);
  std::vector<double> grad(params.size());
  ws.loss_and_gradient(params.data(), b, grad.data());
  const double center = ws.loss(params.data(), b);
  gradient_check r;
  double worst = 0.0;
  for (std::size_t i : entries) {
    const double kept = params[i];
    params[i] = kept + step;
    const double up = ws.loss(params.data(), b);
    params[i] = kept - step;
    const double down = ws.loss(params.data(), b);
    params[i] = kept;
    const double numeric = (up - down) / (2 * step);
    const double tolerance = relative * std::abs(numeric) + floor;
    if (std::abs(up - 2 * center + down) / (2 * step) > tolerance) {
      ++r.skipped;
      continue;
    }
    const double diff = std::abs(grad[i] - numeric);
    worst = std::max(worst, diff / (std::abs(numeric) + floor));
    ++r.checked;
    if (diff > tolerance) {
      ++r.failed;
      MESSAGE("entry " << i << ": gradient " << grad[i] << ", central difference " << numeric);
    }
  }
  MESSAGE(r.checked << " entries checked, " << r.skipped << " at a kink skipped, "
                    << "worst relative difference " << worst);
  return r;
}

// Mean softmax cross-entropy of b from logits, in double.
double cross_entropy(const float* logits, const batch& b, std::size_t classes) {
  double total = 0.0;
  for (std::size_t i = 0; i < b.size; ++i) {
    const float* row = logits + i * classes;
    const double m = *std::max_element(row, row + classes);
    double sum = 0.0;
    for (std::size_t c = 0; c < classes; ++c) sum += std::exp(row[c] - m);
    total += m + std::log(sum) - row[b.y[i]];
  }
  return total / static_cast<double>(b.size);
}

}  // namespace

TEST_CASE("the cnn declares TensorFlow-named variables in creation order") {
  const auto m = make_cnn({data_shape{{28, 28, 1}}, 10, 1e-4f, {}});
  const model_layout layout = m->layout();
  CHECK(layout.kind() == "cnn");
  CHECK(layout.spec() == "28x28x1-5x5x8-5x5x32-10");
  CHECK(m->classes() == 10);
  const auto& v = layout.variables();
  REQUIRE(v.size() == 6);
  const char* names[] = {"conv1/weights", "conv1/biases", "conv2/weights",
                         "conv2/biases",  "dense/weights", "dense/biases"};
  const std::size_t rows[] = {25, 1, 200, 1, 7 * 7 * 32, 1};
  const std::size_t cols[] = {8, 8, 32, 32, 10, 10};
  std::size_t offset = 0;
  for (std::size_t i = 0; i < 6; ++i) {
    CAPTURE(i);
    CHECK(v[i].name == names[i]);
    CHECK(v[i].rows == rows[i]);
    CHECK(v[i].cols == cols[i]);
    CHECK(v[i].offset == offset);
    const bool weights = i % 2 == 0;
    CHECK(v[i].regularized == weights);
    CHECK(v[i].init.kind == (weights ? init_kind::truncated_normal : init_kind::zeros));
    if (weights) CHECK(v[i].init.stddev == doctest::Approx(std::sqrt(2.0 / rows[i])));
    offset += rows[i] * cols[i];
  }
  CHECK(layout.size() == offset);
}

TEST_CASE("the cnn refuses examples that are not images it can pool twice") {
  auto refused = [](std::vector<std::size_t> dims, std::size_t classes, const char* named) {
    CAPTURE(named);
    CHECK_THROWS_WITH_AS(make_cnn({data_shape{std::move(dims)}, classes, 0.0f, {}}),
                         doctest::Contains(named), std::invalid_argument);
  };
  refused({784}, 10, "{784}");
  refused({28, 28}, 10, "{28, 28}");
  refused({30, 28, 1}, 10, "{30, 28, 1}");
  refused({28, 26, 1}, 10, "{28, 26, 1}");
  refused({28, 28, 0}, 10, "{28, 28, 0}");
  refused({28, 28, 1}, 1, "1 classes");
  CHECK_NOTHROW(make_cnn({data_shape{{32, 24, 3}}, 2, 0.0f, {}}));
}

TEST_CASE("a workspace refuses a batch of another image size and grows for a larger one") {
  const cnn_shape s = small_shape();
  basic_cnn_workspace<float> ws(s, 2, 0.0f);
  std::vector<float> params(parameter_count(s), 0.01f);
  cnn_shape other = s;
  other.height = 12;
  CHECK_THROWS_AS(ws.loss(params.data(), random_batch(other, 2, 1)), std::invalid_argument);
  // Evaluation hands the workspace chunks larger than the training batch.
  const auto big = random_batch(s, 3, 1);
  basic_cnn_workspace<float> fitting(s, 3, 0.0f);
  CHECK(ws.loss(params.data(), big) == fitting.loss(params.data(), big));
  CHECK_NOTHROW(ws.loss(params.data(), random_batch(s, 1, 1)));
}

TEST_CASE("the scores are the convolutional network's logits, computed directly") {
  for (const cnn_shape& s : {small_shape(), cnn_shape{}}) {
    CAPTURE(s.to_string());
    const auto b = random_batch(s, 6, 51);  // more than one chunk of images
    const auto params = random_params(s, 52);
    basic_cnn_workspace<double> ws(s, b.size, 0.0);
    const double* scores = ws.scores(params.data(), b);
    const auto expected = direct_logits(s, params, b);
    double worst = 0.0;
    for (std::size_t i = 0; i < expected.size(); ++i)
      worst = std::max(worst, std::abs(scores[i] - expected[i]) / (1.0 + std::abs(expected[i])));
    CHECK(worst < 1e-12);
  }
}

TEST_CASE("in double, every gradient entry of a small cnn matches central differences") {
  const cnn_shape s = small_shape();
  const auto b = random_batch(s, 3, 7);
  const auto params = random_params(s, 8);
  std::vector<std::size_t> all(params.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  const auto r = check_gradient(s, b, params, 0.1, all);
  CHECK(r.failed == 0);
  CHECK(r.checked + r.skipped == all.size());
  CHECK(r.skipped * 50 <= all.size());
}

TEST_CASE("in double, sampled gradient entries of the built-in cnn match central differences") {
  const cnn_shape s;  // 28x28x1, as make_cnn builds it for Fashion-MNIST
  const auto b = random_batch(s, 2, 21);
  const auto entries = sampled_entries(s, 40, 23);
  const auto r = check_gradient(s, b, random_params(s, 22), 1e-2, entries);
  CHECK(r.failed == 0);
  CHECK(r.checked + r.skipped == entries.size());
  CHECK(r.skipped * 50 <= entries.size());
}

TEST_CASE("the float gradient follows the double one the check verified") {
  const cnn_shape s;
  const auto b = random_batch(s, 10, 31);
  const auto params = random_params(s, 32);
  std::vector<float> params_f(params.begin(), params.end());
  std::vector<double> grad_d(params.size());
  std::vector<float> grad_f(params.size());
  basic_cnn_workspace<double> wd(s, b.size, 1e-3);
  basic_cnn_workspace<float> wf(s, b.size, 1e-3f);
  const double loss_d = wd.loss_and_gradient(params.data(), b, grad_d.data());
  const float loss_f = wf.loss_and_gradient(params_f.data(), b, grad_f.data());
  CHECK(loss_f == doctest::Approx(loss_d).epsilon(1e-5));
  double largest = 0.0, worst = 0.0;
  for (std::size_t i = 0; i < grad_d.size(); ++i) {
    largest = std::max(largest, std::abs(grad_d[i]));
    worst = std::max(worst, std::abs(grad_d[i] - grad_f[i]));
  }
  MESSAGE("largest gradient entry " << largest << ", float off by at most " << worst);
  CHECK(worst <= 1e-4 * largest);
}

TEST_CASE("scores are the logits whose cross-entropy loss() reports") {
  const float l2 = 1e-3f;
  const auto m = make_cnn({data_shape{{28, 28, 1}}, 10, l2, {}});
  const cnn_shape s;
  const auto b = random_batch(s, 5, 41);
  const auto pd = random_params(s, 42);
  const std::vector<float> params(pd.begin(), pd.end());
  auto ws = m->workspace(b.size);
  const float loss = ws->loss(params.data(), b);
  std::vector<float> grad(params.size(), std::nanf(""));
  CHECK(ws->loss_and_gradient(params.data(), b, grad.data()) == loss);
  CHECK(std::all_of(grad.begin(), grad.end(), [](float g) { return std::isfinite(g); }));
  const float* logits = ws->scores(params.data(), b);
  double penalty = 0.0;
  const model_layout layout = m->layout();
  for (const auto& v : layout.variables())
    if (v.regularized)
      for (std::size_t i = v.offset; i < v.offset + v.size(); ++i)
        penalty += 0.5 * l2 * double(params[i]) * params[i];
  CHECK(loss == doctest::Approx(cross_entropy(logits, b, 10) + penalty).epsilon(1e-5));
}

}  // namespace test_cnn
