// The LibTorch adapter with several row variables (model/torch/torch_lookups.hpp):
// each variable's features hashed into its own key range, each given to the
// module as its own lookup, and the gradient autograd writes for each
// variable's rows against a finite difference of the loss.
#include "torch_doctest.hpp"  // first: doctest's CHECK, not glog's

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <vector>

#include "model/init.hpp"
#include "model/sparse_logreg.hpp"
#include "model/sparse_models.hpp"
#include "torch_wide_deep.hpp"

namespace test_torch_rows {

using namespace downpour;
using namespace downpour::testing;

namespace {

const wide_deep_shape small{64, 32, 50};  // deep: features below 50

// 8 examples of 1 to 6 features among 0..99 (half of them only in wide's range).
batch sparse_batch() {
  std::mt19937 draw(5);
  batch b;
  b.size = 8;
  b.offsets = {0};
  for (std::size_t i = 0; i < b.size; ++i) {
    std::set<std::uint64_t> features;
    const std::size_t count = 1 + draw() % 6;
    while (features.size() < count) features.insert(draw() % 100);
    for (std::uint64_t f : features) {
      b.keys.push_back(f);
      b.values.push_back(0.5f + static_cast<float>(draw() % 100) / 100.0f);
    }
    b.offsets.push_back(b.keys.size());
    b.y.push_back(static_cast<std::int32_t>(draw() % 2));
  }
  return b;
}

// The keys a variable's features hash into, in its key range.
std::set<std::uint64_t> keys_of(const batch& b, std::uint64_t rows, std::uint64_t seed,
                                std::uint64_t first_key, std::uint64_t end_feature) {
  const sparse_logreg hashing(rows, seed);
  std::set<std::uint64_t> keys;
  for (std::uint64_t f : b.keys)
    if (f < end_feature) keys.insert(first_key + hashing.row_of(f));
  return keys;
}

// Values for the touched keys, each row as wide as its variable.
std::vector<float> random_rows(std::size_t floats) {
  std::mt19937 draw(9);
  std::normal_distribution<float> normal(0.0f, 0.3f);
  std::vector<float> rows(floats);
  for (float& v : rows) v = normal(draw);
  return rows;
}

}  // namespace

TEST_CASE("a LibTorch module's row variables follow its parameters in the layout, each with its "
          "width, key range and update rule") {
  const auto m = make_torch_model(wide_deep_spec(small));
  const model_layout l = m->layout();
  CHECK(l.variables_text() == "top/weight 2x5,top/bias 1x2,wide rows 64x1,deep rows 32x4");
  REQUIRE(l.row_variables().size() == 2);
  CHECK(l.row_variables()[0].first_key == 0);
  CHECK(l.row_variables()[1].first_key == 64);
  CHECK(l.row_variables()[0].update.rule == update_rule::ftrl);
  CHECK(l.row_variables()[1].update.rule == update_rule::adagrad);
  CHECK(l.rows().keys() == 96);
}

TEST_CASE("a batch touches each row variable's rows of the features in its range, in its key "
          "range, ascending") {
  const auto m = make_torch_model(wide_deep_spec(small));
  auto w = m->workspace(8);
  const batch b = sparse_batch();
  const std::vector<std::uint64_t> touched = w->touched_rows(b);
  std::set<std::uint64_t> expected = keys_of(b, 64, kFeatureHashSeed, 0, 100);
  const std::set<std::uint64_t> deep = keys_of(b, 32, kFeatureHashSeed + 1, 64, 50);
  expected.insert(deep.begin(), deep.end());
  CHECK(touched == std::vector<std::uint64_t>(expected.begin(), expected.end()));
  CHECK(std::count_if(touched.begin(), touched.end(), [](auto k) { return k >= 64; }) ==
        static_cast<std::ptrdiff_t>(deep.size()));
}

TEST_CASE("the gradient autograd writes for each row variable's rows matches a finite difference "
          "of the loss") {
  const auto m = make_torch_model(wide_deep_spec(small));
  const model_layout l = m->layout();
  auto w = m->workspace(8);
  const batch b = sparse_batch();
  const std::vector<std::uint64_t> keys = w->touched_rows(b);
  const std::size_t floats = l.rows().values_for(keys);
  std::vector<float> rows = random_rows(floats);
  const std::vector<float> params = initial_parameters(l, 3);
  std::vector<float> grad(l.size()), row_grad(floats, 7.0f), scratch(l.size()), scratch_rows(floats);
  w->loss_and_gradient(params.data(), rows.data(), b, grad.data(), row_grad.data());
  const std::vector<float> analytic = row_grad;
  const float eps = 1e-2f;
  float worst = 0.0f;
  std::size_t nonzero = 0;
  for (std::size_t i = 0; i < floats; ++i) {
    const float kept = rows[i];
    rows[i] = kept + eps;
    const float up = w->loss_and_gradient(params.data(), rows.data(), b, scratch.data(),
                                          scratch_rows.data());
    rows[i] = kept - eps;
    const float down = w->loss_and_gradient(params.data(), rows.data(), b, scratch.data(),
                                            scratch_rows.data());
    rows[i] = kept;
    const float numeric = (up - down) / (2 * eps);
    worst = std::max(worst, std::abs(numeric - analytic[i]));
    nonzero += std::abs(analytic[i]) > 1e-4f;
  }
  MESSAGE("largest difference from the finite difference over " << floats
                                                                 << " floats: " << worst);
  CHECK(worst < 1e-4f);
  // Both variables' rows got a gradient (the wide ones are the first keys).
  const std::size_t wide = static_cast<std::size_t>(
      std::count_if(keys.begin(), keys.end(), [](auto k) { return k < 64; }));
  CHECK(std::any_of(analytic.begin(), analytic.begin() + wide, [](float g) { return g != 0; }));
  CHECK(std::any_of(analytic.begin() + wide, analytic.end(), [](float g) { return g != 0; }));
  CHECK(nonzero > floats / 2);
}

TEST_CASE("a row variable with an empty feature range is refused in one line naming it") {
  torch_model_spec spec = wide_deep_spec(small);
  spec.row_variables[1].first_feature = 50;
  CHECK_THROWS_WITH_AS(make_torch_model(spec),
                       "torch model torch_wide_deep: row variable deep looks up no features: "
                       "[50, 50)",
                       std::invalid_argument);
}

}  // namespace test_torch_rows
