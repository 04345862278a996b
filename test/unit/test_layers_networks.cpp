// Layers composed: a sequential and a DLRM-shaped graph checked end to end
// against central differences in double, the graph's summing and zeroing of
// gradients, and the float dense-ReLU-dense network against the built-in mlp.
#include <doctest/doctest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "data/batcher.hpp"
#include "layer_gradients.hpp"
#include "model/layers/activations.hpp"
#include "model/layers/concatenate.hpp"
#include "model/layers/conv_pool.hpp"
#include "model/layers/dense.hpp"
#include "model/layers/dot_interaction.hpp"
#include "model/layers/graph.hpp"
#include "model/layers/losses.hpp"
#include "model/layers/sequential.hpp"
#include "handwritten_mlp.hpp"
#include "model/mlp.hpp"

namespace test_layers_networks {

using namespace downpour;
using namespace downpour::layers;
using downpour::testing::central_differences;
using downpour::testing::uniform_values;
using downpour::testing::unwritten;
using downpour::testing::values_of;
using downpour::testing::weighted_sum;
using downpour::testing::worst_relative_error;

namespace {

constexpr double tolerance = 1e-6;

template <class T>
sequential<T> two_layer(std::size_t in, std::size_t hidden, std::size_t classes) {
  sequential<T> net(in);
  net.add(dense<T>(in, hidden));
  net.add(relu<T>(hidden));
  net.add(dense<T>(hidden, classes));
  return net;
}

// The smallest |pre-activation| of the first dense layer: central
// differences of step 1e-5 never cross the ReLU's kink when it is well above
// the step times the inputs' size (at most 1 here).
double smallest_pre_activation(const std::vector<double>& x, std::size_t n, std::size_t in,
                               std::size_t hidden, const std::vector<double>& params) {
  dense<double> first(in, hidden);
  first.reserve(n);
  const auto z = values_of(first.forward({x.data(), n, in}, params.data(), pass{}));
  double smallest = 1e300;
  for (double v : z) smallest = std::min(smallest, std::abs(v));
  return smallest;
}

// Two embedding fields and a bottom layer on 3 numeric features, DLRM's
// interaction with the bottom output in front, a top layer to one logit.
graph<double> small_dlrm() {
  graph<double> g;
  const node numeric = g.input(3);
  sequential<double> bottom(3);
  bottom.add(dense<double>(3, 4));
  bottom.add(sigmoid<double>(4));
  const node b = g.add("bottom", std::move(bottom), numeric);
  const node e1 = g.embedding(embedding_bag<double>(4, combiner::sum));
  const node e2 = g.embedding(embedding_bag<double>(4, combiner::mean));
  const node z =
      g.add(dot_interaction<double>(3, 4, interaction_output::first_then_pairs), {b, e1, e2});
  g.add("top", dense<double>(4 + 3, 1), z);
  return g;
}

batch random_batch(std::size_t n, std::size_t input, std::size_t classes, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  batch b;
  b.size = n;
  b.input_size = input;
  for (std::size_t i = 0; i < n * input; ++i) b.x.push_back(u(rng));
  for (std::size_t i = 0; i < n; ++i) b.y.push_back(static_cast<std::int32_t>(rng() % classes));
  return b;
}

}  // namespace

TEST_CASE("a dense-ReLU-dense network with softmax cross-entropy has every gradient entry right") {
  const std::size_t n = 5, in = 6, hidden = 8, classes = 4;
  sequential<double> net = two_layer<double>(in, hidden, classes);
  softmax_cross_entropy_loss<double> xent(classes);
  net.reserve(n);
  xent.reserve(n);
  std::vector<double> x = uniform_values(n * in, 31);
  std::vector<double> params = uniform_values(net.parameter_count(), 32);
  REQUIRE(smallest_pre_activation(x, n, in, hidden, params) > 1e-3);
  const std::vector<std::int32_t> labels{3, 0, 2, 1, 3};
  auto loss = [&] {
    return xent.forward(net.forward({x.data(), n, in}, params.data(), pass{}), labels.data());
  };
  loss();
  std::vector<double> grad = unwritten(params.size());
  const auto dx = values_of(net.backward(xent.backward(), params.data(), grad.data()));
  const double at_params = worst_relative_error(grad, central_differences(loss, params));
  const double at_input = worst_relative_error(dx, central_differences(loss, x));
  MESSAGE("worst relative error at the parameters " << at_params << ", at the input " << at_input);
  CHECK(at_params < tolerance);
  CHECK(at_input < tolerance);
}

TEST_CASE("a sequential names and shapes its variables as the built-in mlp does") {
  const mlp_spec spec{784, {500, 100}, 10};
  sequential<float> net(784);
  net.add(dense<float>(784, 500));
  net.add(relu<float>(500));
  net.add(dense<float>(500, 100));
  net.add(relu<float>(100));
  net.add(dense<float>(100, 10));
  const model_layout built_in = spec.layout("mlp");
  CHECK(model_layout("mlp", spec.text(), net.variables("")) == built_in);
  CHECK(net.parameter_count() == built_in.size());
}

TEST_CASE(
    "the built-in mlp, composed from the layers, gives the hand-written mlp's loss and gradient "
    "bit for bit") {
  for (const mlp_spec& spec : {mlp_spec{784, {500}, 10}, mlp_spec{30, {20, 12}, 4},
                               mlp_spec{30, {}, 4}}) {
    const std::size_t n = 100;
    const float l2 = 1e-4f;
    const batch b = random_batch(n, spec.input, spec.classes, 41);
    std::vector<float> params(spec.layout("mlp").size());
    std::mt19937_64 rng(42);
    std::normal_distribution<float> nd(0.0f, 0.1f);
    for (float& p : params) p = nd(rng);

    testing::handwritten_mlp<float> by_hand(spec, n, l2);
    std::vector<float> want(params.size());
    const float want_loss = by_hand.loss_and_gradient(params.data(), b, want.data());
    mlp_workspace built_in(spec, n, l2);
    std::vector<float> grad(params.size(), -1.0f);
    const float loss = built_in.loss_and_gradient(params.data(), b, grad.data());

    CAPTURE(spec.text());
    CHECK(loss == want_loss);
    std::size_t differing = 0;
    for (std::size_t i = 0; i < grad.size(); ++i) differing += grad[i] != want[i];
    CHECK(differing == 0);
  }
}

TEST_CASE("a DLRM-shaped graph gets its parameter and row gradients right end to end") {
  graph<double> g = small_dlrm();
  const std::size_t n = 4;
  g.reserve(n);
  sigmoid_cross_entropy_loss<double> xent(1);
  xent.reserve(n);
  std::vector<double> numeric = uniform_values(n * 3, 51);
  std::vector<double> params = uniform_values(g.parameter_count(), 52);
  std::vector<double> block1 = uniform_values(3 * 4, 53), block2 = uniform_values(2 * 4, 54);
  const std::vector<std::uint64_t> off1{0, 1, 3, 4, 6}, off2{0, 2, 2, 3, 5};
  const std::vector<std::uint32_t> rows1{0, 2, 2, 1, 0, 1}, rows2{1, 1, 0, 0, 1};
  const std::vector<std::int32_t> labels{1, 0, 0, 1};
  auto loss = [&] {
    feed<double> in{{{numeric.data(), n, 3}},
                    {{{n, off1.data(), rows1.data()}, {block1.data(), 3, 4}},
                     {{n, off2.data(), rows2.data()}, {block2.data(), 2, 4}}}};
    return xent.forward(g.forward(in, params.data(), pass{}), labels.data());
  };
  loss();
  std::vector<double> grad = unwritten(params.size());
  std::vector<double> rg1 = unwritten(block1.size()), rg2 = unwritten(block2.size());
  g.backward(xent.backward(), params.data(), grad.data(), {{rg1.data(), 3, 4}, {rg2.data(), 2, 4}});
  const double at_params = worst_relative_error(grad, central_differences(loss, params));
  const double at_rows = std::max(worst_relative_error(rg1, central_differences(loss, block1)),
                                  worst_relative_error(rg2, central_differences(loss, block2)));
  MESSAGE("worst relative error at the parameters " << at_params << ", at the rows " << at_rows);
  CHECK(at_params < tolerance);
  CHECK(at_rows < tolerance);
  CHECK(g.variables().front().name == "bottom/layer1/weights");
  CHECK(g.variables().back().name == "top/biases");
}

TEST_CASE("a graph sums the gradients of an output that two nodes read") {
  graph<double> g;
  const node x = g.input(3);
  const node h = g.add("hidden", dense<double>(3, 2), x);
  const node a = g.add(sigmoid<double>(2), h);
  g.add("out", dense<double>(4, 2), g.add(concatenate<double>({2, 2}), {a, h}));
  const std::size_t n = 3;
  g.reserve(n);
  std::vector<double> in = uniform_values(n * 3, 61);
  std::vector<double> params = uniform_values(g.parameter_count(), 62);
  const std::vector<double> probe = uniform_values(n * 2, 63);
  auto loss = [&] {
    return weighted_sum(g.forward({{{in.data(), n, 3}}, {}}, params.data(), pass{}), probe);
  };
  loss();
  std::vector<double> grad = unwritten(params.size());
  g.backward({probe.data(), n, 2}, params.data(), grad.data(), {});
  CHECK(worst_relative_error(grad, central_differences(loss, params)) < tolerance);
}

TEST_CASE("a graph gives zero gradients to a layer the output does not depend on") {
  graph<double> g;
  const node x = g.input(2);
  g.add("unused", dense<double>(2, 2), x);
  g.add("used", dense<double>(2, 1), x);
  g.reserve(2);
  const std::vector<double> in = uniform_values(4, 71), params = uniform_values(9, 72);
  const std::vector<double> dout{1.0, -1.0};
  g.forward({{{in.data(), 2, 2}}, {}}, params.data(), pass{});
  std::vector<double> grad = unwritten(9);
  g.backward({dout.data(), 2, 1}, params.data(), grad.data(), {});
  CHECK(std::all_of(grad.begin(), grad.begin() + 6, [](double v) { return v == 0.0; }));
  CHECK(std::none_of(grad.begin() + 6, grad.end(), [](double v) { return std::isnan(v); }));
}

TEST_CASE("a network run chunk by chunk with the adding backward sums the chunks' gradients") {
  // dense, ReLU (the default adding: no parameters) and a convolution block.
  sequential<double> net(4 * 4 * 1);
  net.add(conv_pool<double>({4, 4, 1, 2, 3}, 0.1f));
  net.add(relu<double>(8));
  net.add(dense<double>(8, 3));
  net.reserve(6);
  const auto in = testing::uniform_values(6 * 16, 31), params = testing::uniform_values(
      net.parameter_count(), 32), dout = testing::uniform_values(6 * 3, 33);
  // Written for the 6 rows at once, and added up over chunks of 4 and 2.
  net.forward({in.data(), 6, 16}, params.data(), pass{});
  std::vector<double> whole(net.parameter_count());
  net.backward_parameters({dout.data(), 6, 3}, params.data(), whole.data());
  std::vector<double> summed(net.parameter_count(), 0.0);
  for (std::size_t first : {0, 4}) {
    const std::size_t rows = first == 0 ? 4 : 2;
    net.forward({in.data() + first * 16, rows, 16}, params.data(), pass{});
    net.backward_parameters_adding({dout.data() + first * 3, rows, 3}, params.data(),
                                   summed.data());
  }
  double worst = 0.0;
  for (std::size_t i = 0; i < whole.size(); ++i)
    worst = std::max(worst, std::abs(whole[i] - summed[i]) / (1.0 + std::abs(whole[i])));
  CHECK(worst < 1e-14);
}

}  // namespace test_layers_networks
