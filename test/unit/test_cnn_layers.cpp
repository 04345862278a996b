// The built-in cnn composed from the layers (model/layers/conv_pool.hpp,
// dense) against the hand-written passes it replaced
// (bench/support/handwritten_cnn.hpp), kept as an independent implementation.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "bench/support/handwritten_cnn.hpp"
#include "model/cnn.hpp"
#include "model/init.hpp"

namespace test_cnn_layers {

using namespace downpour;

namespace {

batch random_batch(const cnn_shape& s, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> pixel(0.0f, 1.0f);
  batch b;
  b.size = n;
  b.input_size = s.height * s.width * s.channels;
  for (std::size_t i = 0; i < n * b.input_size; ++i) b.x.push_back(pixel(rng));
  for (std::size_t i = 0; i < n; ++i) b.y.push_back(static_cast<std::int32_t>(rng() % s.classes));
  return b;
}

struct step {
  float loss = 0.0f;
  std::vector<float> grad, scores;
};

template <class Workspace>
step run(Workspace ws, const std::vector<float>& params, const batch& b, std::size_t classes) {
  step r;
  r.grad.assign(params.size(), 0.0f);
  r.loss = ws.loss_and_gradient(params.data(), b, r.grad.data());
  const float* scores = ws.scores(params.data(), b);
  r.scores.assign(scores, scores + b.size * classes);
  return r;
}

// The largest |a - b| relative to the largest |b| of the variable's entries.
double worst_relative(const std::vector<float>& a, const std::vector<float>& b,
                      const variable_info& v) {
  double largest = 0.0, worst = 0.0;
  for (std::size_t i = v.offset; i < v.offset + v.size(); ++i) {
    largest = std::max(largest, std::abs(static_cast<double>(b[i])));
    worst = std::max(worst, std::abs(static_cast<double>(a[i]) - b[i]));
  }
  return largest > 0.0 ? worst / largest : worst;
}

}  // namespace

TEST_CASE("the cnn composed from layers gives the hand-written passes' loss and gradient") {
  const cnn_shape s;  // the built-in 28x28x1 network
  const auto layout = model_layout("cnn", s.to_string(), s.variables());
  const auto params = initial_parameters(layout, 5);
  const batch b = random_batch(s, 10, 6);  // two chunks of 4 images and one of 2
  const step layered = run(basic_cnn_workspace<float>(s, b.size, 1e-3f), params, b, s.classes);
  const step written = run(handwritten_cnn<float>(s, b.size, 1e-3f), params, b, s.classes);
  // Forward, the loss and every gradient but the convolutions' weights: the
  // same arithmetic in the same order, chunk by chunk of 4 images.
  CHECK(layered.scores == written.scores);
  CHECK(layered.loss == written.loss);
  for (const variable_info& v : layout.variables()) {
    CAPTURE(v.name);
    const double worst = worst_relative(layered.grad, written.grad, v);
    MESSAGE(v.name << ": worst relative difference " << worst);
    // The hand-written passes summed a convolution's weight gradient over
    // the chunks in one buffer, and Eigen's product adds into it block by
    // block of its depth (4 images' pixels); the layer adds each chunk's
    // product to the gradient whole. The same sums grouped differently: the
    // rounding differs where a chunk's product spans more than one block
    // (conv1: 3136 pixels a chunk; under 4e-7 in the runs measured).
    if (v.name == "conv1/weights" || v.name == "conv2/weights")
      CHECK(worst < 1e-6);
    else
      CHECK(worst == 0.0);
  }
}

}  // namespace test_cnn_layers
