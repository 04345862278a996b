// What the layers do besides their calculus: dropout's determinism, an
// embedding bag's duplicate rows, DLRM's interaction order, the losses'
// agreement with the built-in code and their stability, and the errors a
// miswired or overfed layer gives.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "model/layers/activations.hpp"
#include "model/layers/dense.hpp"
#include "model/layers/dot_interaction.hpp"
#include "model/layers/dropout.hpp"
#include "model/layers/embedding_bag.hpp"
#include "model/layers/graph.hpp"
#include "model/layers/losses.hpp"
#include "model/layers/sequential.hpp"
#include "model/softmax_cross_entropy.hpp"

namespace test_layers_behaviour {

using namespace downpour;
using namespace downpour::layers;

namespace {

std::vector<float> copy_of(const_tensor<float> t) {
  return {t.data, t.data + t.size()};
}

std::vector<float> dropped(dropout<float>& d, const std::vector<float>& x, std::size_t rows,
                           pass p) {
  return copy_of(d.forward({x.data(), rows, x.size() / rows}, nullptr, p));
}

}  // namespace

TEST_CASE("dropout drops the same values for the same seed and step, other ones otherwise") {
  const std::vector<float> x(4 * 250, 1.0f);
  dropout<float> a(250, 0.3, 7), b(250, 0.3, 7), other_seed(250, 0.3, 8);
  for (auto* d : {&a, &b, &other_seed}) d->reserve(4);
  const pass step5{phase::training, 5}, step6{phase::training, 6};
  const auto first = dropped(a, x, 4, step5);
  CHECK(dropped(b, x, 4, step5) == first);
  CHECK(dropped(a, x, 4, step5) == first);
  CHECK(dropped(a, x, 4, step6) != first);
  CHECK(dropped(other_seed, x, 4, step5) != first);
  std::size_t zeros = 0;
  for (float v : first) {
    CHECK((v == 0.0f || std::abs(v - 1.0f / 0.7f) < 1e-6f));
    zeros += v == 0.0f;
  }
  MESSAGE(zeros << " of " << first.size() << " dropped at rate 0.3");
  CHECK(zeros > 240);  // 300 expected, the binomial's sd is 14.5
  CHECK(zeros < 360);
}

TEST_CASE("dropout in evaluation passes its input and its gradient through unchanged") {
  dropout<float> d(3, 0.5, 1);
  d.reserve(2);
  const std::vector<float> x{1, 2, 3, 4, 5, 6};
  CHECK(dropped(d, x, 2, pass{phase::evaluation, 9}) == x);
  CHECK(copy_of(d.backward({x.data(), 2, 3}, nullptr, nullptr)) == x);
}

TEST_CASE("an embedding bag adds up the gradient of a row used several times") {
  embedding_bag<float> bag(2, combiner::sum);
  bag.reserve(3);
  // Row 0 twice in example 0 and once in example 2; row 1 in example 1 only.
  const std::vector<std::uint64_t> offsets{0, 2, 3, 4};
  const std::vector<std::uint32_t> rows{0, 0, 1, 0};
  const std::vector<float> block{1, 2, 10, 20};
  const auto out = copy_of(bag.forward({3, offsets.data(), rows.data()}, {block.data(), 2, 2}));
  CHECK(out == std::vector<float>{2, 4, 10, 20, 1, 2});
  const std::vector<float> dout{1, 1, 5, 6, 100, 200};
  std::vector<float> row_grad(4, -1.0f);
  bag.backward({dout.data(), 3, 2}, {row_grad.data(), 2, 2});
  CHECK(row_grad == std::vector<float>{102, 202, 5, 6});
}

TEST_CASE(
    "an embedding bag's mean divides by the list's length and gives zeros for an empty list") {
  embedding_bag<float> bag(1, combiner::mean);
  bag.reserve(2);
  const std::vector<std::uint64_t> offsets{0, 0, 4};
  const std::vector<std::uint32_t> rows{0, 1, 1, 1};
  const std::vector<float> block{2, 6};
  CHECK(copy_of(bag.forward({2, offsets.data(), rows.data()}, {block.data(), 2, 1})) ==
        std::vector<float>{0, 5});
  const std::vector<float> dout{7, 4};
  std::vector<float> row_grad(2);
  bag.backward({dout.data(), 2, 1}, {row_grad.data(), 2, 1});
  CHECK(row_grad == std::vector<float>{1, 3});
}

TEST_CASE("an embedding bag refuses a row outside its block, naming the example and the row") {
  embedding_bag<float> bag(1, combiner::sum);
  bag.reserve(2);
  const std::vector<std::uint64_t> offsets{0, 1, 2};
  const std::vector<std::uint32_t> rows{0, 5};
  const std::vector<float> block{1, 2};
  CHECK_THROWS_WITH_AS(bag.forward({2, offsets.data(), rows.data()}, {block.data(), 2, 1}),
                       "embedding_bag: example 1 names row 5 of a block of 2 rows",
                       std::out_of_range);
}

TEST_CASE("the dot interaction puts the first vector, then the pairs in DLRM's order") {
  dot_interaction<float> j(3, 2, interaction_output::first_then_pairs);
  j.reserve(1);
  const std::vector<float> a{1, 2}, b{3, 4}, c{5, 6};
  const auto out = copy_of(j.forward({{a.data(), 1, 2}, {b.data(), 1, 2}, {c.data(), 1, 2}}));
  // a, then b.a, c.a, c.b.
  CHECK(out == std::vector<float>{1, 2, 11, 17, 39});
}

TEST_CASE(
    "the softmax cross-entropy layer gives the built-in models' loss and gradient bit for bit") {
  const std::vector<float> logits{0.5f, -1.25f, 3.0f, 2.0f, 0.0f, -0.75f};
  const std::vector<std::int32_t> labels{2, 0};
  softmax_cross_entropy_loss<float> xent(3);
  xent.reserve(2);
  const float loss = xent.forward({logits.data(), 2, 3}, labels.data());
  const auto grad = copy_of(xent.backward());
  std::vector<float> want(6);
  const double total =
      downpour::softmax_cross_entropy(logits.data(), labels.data(), 2, 3, 0.5f, want.data());
  CHECK(loss == static_cast<float>(total / 2.0));
  CHECK(grad == want);
}

TEST_CASE("sigmoid cross-entropy is finite and right for logits of plus and minus 1e4") {
  sigmoid_cross_entropy_loss<float> xent(1);
  xent.reserve(4);
  const std::vector<float> logits{1e4f, -1e4f, 1e4f, -1e4f};
  const std::vector<std::int32_t> labels{1, 0, 0, 1};
  // Two right with certainty (loss 0), two wrong by 1e4 each.
  CHECK(xent.forward({logits.data(), 4, 1}, labels.data()) == doctest::Approx(5000.0f));
  CHECK(copy_of(xent.backward()) == std::vector<float>{0.0f, 0.0f, 0.25f, -0.25f});
}

TEST_CASE("sigmoid cross-entropy refuses a label other than 0 or 1, naming the row") {
  sigmoid_cross_entropy_loss<float> xent(1);
  xent.reserve(2);
  const std::vector<float> logits{0, 0};
  const std::vector<std::int32_t> labels{1, 2};
  CHECK_THROWS_WITH_AS(xent.forward({logits.data(), 2, 1}, labels.data()),
                       "sigmoid_cross_entropy_loss: row 1 has label 2, expected 0 to 1",
                       std::out_of_range);
}

TEST_CASE("mean squared error is the mean over every value of the squared differences") {
  mean_squared_error_loss<float> mse(2);
  mse.reserve(2);
  const std::vector<float> p{1, 2, 3, 4}, t{1, 0, 0, 4};
  CHECK(mse.forward({p.data(), 2, 2}, {t.data(), 2, 2}) == doctest::Approx(13.0f / 4));
  CHECK(copy_of(mse.backward()) == std::vector<float>{0.0f, 1.0f, 1.5f, 0.0f});
}

TEST_CASE("a layer refuses a batch larger than it reserved, naming both sizes") {
  relu<float> r(2);
  r.reserve(1);
  const std::vector<float> x(4);
  CHECK_THROWS_WITH_AS(
      r.forward({x.data(), 2, 2}, nullptr, pass{}),
      "relu: a batch of 2 rows, more than the 1 reserved (reserve(max_batch) first)",
      std::length_error);
}

TEST_CASE("a sequential refuses a layer whose input width is not the output width before it") {
  sequential<float> net(4);
  net.add(dense<float>(4, 3));
  CHECK_THROWS_WITH_AS(net.add(relu<float>(4)),
                       "sequential: layer 2 (relu) takes 4 values per example, the one before "
                       "gives 3",
                       std::invalid_argument);
}

TEST_CASE("a graph refuses a join of nodes of other widths, naming the node") {
  graph<float> g;
  const node a = g.input(2), b = g.input(3);
  CHECK_THROWS_WITH_AS(g.add(dot_interaction<float>(2, 2, interaction_output::pairs), {a, b}),
                       "graph: dot_interaction takes 2 values per example, node 1 gives 3",
                       std::invalid_argument);
}

}  // namespace test_layers_behaviour
