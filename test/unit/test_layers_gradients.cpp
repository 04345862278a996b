// Every building block of model/layers/ against central differences in
// double: the gradient at its inputs and at its parameters (or rows), on
// random values, for the scalar sum(output .* random weights).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "layer_gradients.hpp"
#include "model/layers/activations.hpp"
#include "model/layers/concatenate.hpp"
#include "model/layers/conv_pool.hpp"
#include "model/layers/dense.hpp"
#include "model/layers/dot_interaction.hpp"
#include "model/layers/dropout.hpp"
#include "model/layers/elementwise_sum.hpp"
#include "model/layers/embedding_bag.hpp"
#include "model/layers/losses.hpp"

namespace test_layers_gradients {

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
constexpr std::size_t rows = 5;

struct errors {
  double input = 0.0, parameters = 0.0;
};

// The layer's gradients at in and params against central differences, in
// its training phase at one step (dropout's mask stays fixed).
errors check_layer(layer<double>& l, std::vector<double> in, std::vector<double> params) {
  l.reserve(rows);
  const pass at{phase::training, 7};
  const std::vector<double> probe = uniform_values(rows * l.output_width(), 99);
  auto loss = [&] {
    return weighted_sum(l.forward({in.data(), rows, l.input_width()}, params.data(), at), probe);
  };
  loss();
  std::vector<double> grad = unwritten(params.size());
  const auto din =
      values_of(l.backward({probe.data(), rows, l.output_width()}, params.data(), grad.data()));
  errors e;
  e.input = worst_relative_error(din, central_differences(loss, in));
  e.parameters = worst_relative_error(grad, central_differences(loss, params));
  MESSAGE(std::string(l.kind()) << ": worst relative error at the input " << e.input
                                << ", at the parameters " << e.parameters);
  return e;
}

// A join's gradient at each input.
double check_join(join<double>& j, std::vector<std::vector<double>> in) {
  j.reserve(rows);
  const std::vector<double> probe = uniform_values(rows * j.output_width(), 98);
  auto loss = [&] {
    std::vector<const_tensor<double>> views;
    for (std::size_t k = 0; k < in.size(); ++k)
      views.emplace_back(in[k].data(), rows, j.input_widths()[k]);
    return weighted_sum(j.forward(views), probe);
  };
  loss();
  const auto& dins = j.backward({probe.data(), rows, j.output_width()});
  double worst = 0.0;
  for (std::size_t k = 0; k < in.size(); ++k)
    worst =
        std::max(worst, worst_relative_error(values_of(dins[k]), central_differences(loss, in[k])));
  MESSAGE(std::string(j.kind()) << ": worst relative error at the inputs " << worst);
  return worst;
}

}  // namespace

TEST_CASE("a dense layer's gradients at its input, weights and biases match central differences") {
  dense<double> l(4, 3);
  const errors e = check_layer(l, uniform_values(rows * 4, 1), uniform_values(4 * 3 + 3, 2));
  CHECK(e.input < tolerance);
  CHECK(e.parameters < tolerance);
}

TEST_CASE("a dense layer's parameter-only backward writes the same gradient as its full one") {
  dense<double> l(4, 3);
  l.reserve(rows);
  const auto in = uniform_values(rows * 4, 3), params = uniform_values(15, 4);
  const auto dout = uniform_values(rows * 3, 5);
  l.forward({in.data(), rows, 4}, params.data(), pass{});
  std::vector<double> full = unwritten(15), only = unwritten(15);
  l.backward({dout.data(), rows, 3}, params.data(), full.data());
  l.backward_parameters({dout.data(), rows, 3}, params.data(), only.data());
  CHECK(full == only);
}

TEST_CASE("a convolution block's gradients match central differences, one input channel and more") {
  // 5 images: a chunk of 4 and one of 1. Random values leave the pooling
  // windows' maxima and the ReLU's inputs far from a tie at this step size.
  for (const cnn_kernels::conv_block g : {cnn_kernels::conv_block{4, 6, 1, 2, 3},
                                          cnn_kernels::conv_block{4, 4, 2, 3, 3}}) {
    conv_pool<double> l(g, 0.1f);
    const errors e = check_layer(l, uniform_values(rows * l.input_width(), 11),
                                 uniform_values(l.parameter_count(), 12));
    CHECK(e.input < tolerance);
    CHECK(e.parameters < tolerance);
  }
}

TEST_CASE("a convolution block's parameter-only backward writes the same gradient as its full one") {
  conv_pool<double> l({4, 4, 2, 3, 3}, 0.1f);
  l.reserve(rows);
  const auto in = uniform_values(rows * l.input_width(), 13);
  const auto params = uniform_values(l.parameter_count(), 14);
  const auto dout = uniform_values(rows * l.output_width(), 15);
  l.forward({in.data(), rows, l.input_width()}, params.data(), pass{});
  std::vector<double> full = unwritten(params.size()), only = unwritten(params.size());
  l.backward({dout.data(), rows, l.output_width()}, params.data(), full.data());
  l.backward_parameters({dout.data(), rows, l.output_width()}, params.data(), only.data());
  CHECK(full == only);
}

TEST_CASE("ReLU's gradient matches central differences on inputs away from the kink") {
  relu<double> l(6);
  const errors e = check_layer(l, downpour::testing::away_from_zero(rows * 6, 6, 0.05), {});
  CHECK(e.input < tolerance);
}

TEST_CASE("the sigmoid's gradient matches central differences, large inputs included") {
  sigmoid<double> l(6);
  auto in = uniform_values(rows * 6, 7, -4.0, 4.0);
  in[0] = 30.0;
  in[1] = -30.0;
  CHECK(check_layer(l, in, {}).input < tolerance);
}

TEST_CASE("dropout's gradient at a fixed seed and step matches central differences") {
  dropout<double> l(8, 0.5, 42);
  CHECK(check_layer(l, uniform_values(rows * 8, 8), {}).input < tolerance);
}

TEST_CASE("an embedding bag's row gradients match central differences, sum and mean") {
  // Examples 0 and 2 read row 1 twice, example 3 reads no row.
  const std::vector<std::uint64_t> offsets{0, 3, 4, 7, 7, 9};
  const std::vector<std::uint32_t> positions{1, 0, 1, 2, 1, 3, 1, 0, 3};
  const bag_lists lists{rows, offsets.data(), positions.data()};
  for (combiner how : {combiner::sum, combiner::mean}) {
    embedding_bag<double> bag(3, how);
    bag.reserve(rows);
    std::vector<double> block = uniform_values(4 * 3, 9);
    const std::vector<double> probe = uniform_values(rows * 3, 10);
    auto loss = [&] { return weighted_sum(bag.forward(lists, {block.data(), 4, 3}), probe); };
    loss();
    std::vector<double> row_grad = unwritten(block.size());
    bag.backward({probe.data(), rows, 3}, {row_grad.data(), 4, 3});
    const double worst = worst_relative_error(row_grad, central_differences(loss, block));
    MESSAGE((how == combiner::sum ? "sum" : "mean") << ": worst relative error " << worst);
    CHECK(worst < tolerance);
  }
}

TEST_CASE("concatenate's gradient at each input matches central differences") {
  concatenate<double> j({2, 3, 1});
  CHECK(check_join(j, {uniform_values(rows * 2, 11), uniform_values(rows * 3, 12),
                       uniform_values(rows * 1, 13)}) < tolerance);
}

TEST_CASE("an element-wise sum's gradient at each input matches central differences") {
  elementwise_sum<double> j(3, 2);
  CHECK(check_join(j, {uniform_values(rows * 2, 21), uniform_values(rows * 2, 22),
                       uniform_values(rows * 2, 23)}) < tolerance);
}

TEST_CASE("the dot interaction's gradients match central differences, with and without the first") {
  for (auto what : {interaction_output::pairs, interaction_output::first_then_pairs}) {
    dot_interaction<double> j(4, 3, what);
    CHECK(check_join(j, {uniform_values(rows * 3, 14), uniform_values(rows * 3, 15),
                         uniform_values(rows * 3, 16), uniform_values(rows * 3, 17)}) < tolerance);
  }
}

TEST_CASE("softmax cross-entropy's gradient at the logits matches central differences") {
  softmax_cross_entropy_loss<double> xent(4);
  xent.reserve(rows);
  std::vector<double> logits = uniform_values(rows * 4, 18, -3.0, 3.0);
  const std::vector<std::int32_t> labels{0, 3, 1, 1, 2};
  auto loss = [&] { return xent.forward({logits.data(), rows, 4}, labels.data()); };
  loss();
  const double worst =
      worst_relative_error(values_of(xent.backward()), central_differences(loss, logits));
  MESSAGE("worst relative error " << worst);
  CHECK(worst < tolerance);
}

TEST_CASE("sigmoid cross-entropy's gradient matches central differences, soft targets and labels") {
  sigmoid_cross_entropy_loss<double> soft(2), hard(1);
  soft.reserve(rows);
  hard.reserve(rows);
  std::vector<double> logits = uniform_values(rows * 2, 19, -5.0, 5.0);
  logits[0] = 40.0;
  logits[1] = -40.0;
  const std::vector<double> targets = uniform_values(rows * 2, 20, 0.0, 1.0);
  auto soft_loss = [&] {
    return soft.forward({logits.data(), rows, 2}, {targets.data(), rows, 2});
  };
  soft_loss();
  CHECK(worst_relative_error(values_of(soft.backward()), central_differences(soft_loss, logits)) <
        tolerance);
  std::vector<double> one = uniform_values(rows, 21, -5.0, 5.0);
  const std::vector<std::int32_t> labels{1, 0, 0, 1, 1};
  auto hard_loss = [&] { return hard.forward({one.data(), rows, 1}, labels.data()); };
  hard_loss();
  CHECK(worst_relative_error(values_of(hard.backward()), central_differences(hard_loss, one)) <
        tolerance);
}

TEST_CASE("mean squared error's gradient at the predictions matches central differences") {
  mean_squared_error_loss<double> mse(3);
  mse.reserve(rows);
  std::vector<double> predictions = uniform_values(rows * 3, 22);
  const std::vector<double> targets = uniform_values(rows * 3, 23);
  auto loss = [&] { return mse.forward({predictions.data(), rows, 3}, {targets.data(), rows, 3}); };
  loss();
  CHECK(worst_relative_error(values_of(mse.backward()), central_differences(loss, predictions)) <
        tolerance);
}

}  // namespace test_layers_gradients
