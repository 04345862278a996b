// The built-in sparse models through the model interface: logreg's and fm's
// layouts, touched rows, gradients against central finite differences, a
// training run equal to the single-process trainer's, and evaluation over a
// row source with its log loss and AUC.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <vector>

#include "model/builtin.hpp"
#include "model/sparse_metrics.hpp"
#include "model/sparse_models.hpp"
#include "bench/support/sparse_planted.hpp"
#include "bench/support/sparse_trainer.hpp"

namespace downpour::test_sparse_models {
namespace {

model_request sparse_request() {
  return model_request{data_shape{{0}}, 2, 1e-4f, {}};
}

std::shared_ptr<const model> built(const char* name, std::uint64_t rows, std::size_t k = 8) {
  return make_builtin_model({name, {}, rows, k}, sparse_request());
}

// Examples [begin, end) of set as the batcher hands them out.
batch batch_of(const sparse_examples& set, std::size_t begin, std::size_t end) {
  batch b;
  b.size = end - begin;
  const std::uint64_t first = set.offsets[begin];
  for (std::size_t i = begin; i <= end; ++i) b.offsets.push_back(set.offsets[i] - first);
  b.keys.assign(set.keys.begin() + first, set.keys.begin() + set.offsets[end]);
  b.values.assign(set.values.begin() + first, set.values.begin() + set.offsets[end]);
  b.y.assign(set.labels.begin() + begin, set.labels.begin() + end);
  return b;
}

// 30 examples of 6 features among 400 indices, values in [-1.5, 1.5].
sparse_examples random_set() {
  sparse_examples set;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> value(-1.5f, 1.5f);
  for (int i = 0; i < 30; ++i) {
    std::set<std::uint64_t> keys;
    while (keys.size() < 6) keys.insert(rng() % 400);
    for (std::uint64_t k : keys) {
      set.keys.push_back(k);
      set.values.push_back(value(rng));
    }
    set.close_example(static_cast<std::uint8_t>(rng() % 2));
  }
  return set;
}

// Every gradient float against the central difference of the loss in it.
void check_gradient(const model& m, const batch& b, std::vector<float> rows, float bias) {
  auto ws = m.workspace(b.size);
  const std::size_t keys = ws->touched_rows(b).size();
  REQUIRE(rows.size() == keys * only_row_variable(m.layout())->cols);
  std::vector<float> grad(1), row_grad(rows.size());
  ws->loss_and_gradient(&bias, rows.data(), b, grad.data(), row_grad.data());
  std::vector<float> scratch(1), scratch_rows(rows.size());
  const auto loss_at = [&](const std::vector<float>& r, float p) {
    return static_cast<double>(
        ws->loss_and_gradient(&p, r.data(), b, scratch.data(), scratch_rows.data()));
  };
  const float h = 1e-2f;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::vector<float> up = rows, down = rows;
    up[i] += h;
    down[i] -= h;
    const double numeric = (loss_at(up, bias) - loss_at(down, bias)) / (2.0 * h);
    CHECK(row_grad[i] == doctest::Approx(numeric).epsilon(2e-3).scale(0.05));
  }
  const double numeric = (loss_at(rows, bias + h) - loss_at(rows, bias - h)) / (2.0 * h);
  CHECK(grad[0] == doctest::Approx(numeric).epsilon(2e-3).scale(0.05));
}

std::vector<float> random_rows(std::size_t n, float spread, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> value(-spread, spread);
  std::vector<float> rows(n);
  for (float& r : rows) r = value(rng);
  return rows;
}

}  // namespace

TEST_CASE("logreg declares N rows of weights and a dense bias, and scores [0, logit]") {
  const auto m = built("logreg", 1048576);
  const model_layout l = m->layout();
  CHECK(l.to_string() == "logreg 1048576");
  CHECK(l.variables_text() == "bias 1x1,weights rows 1048576x1");
  CHECK(l.size() == 1);
  CHECK(only_row_variable(l)->init.kind == init_kind::zeros);
  CHECK(m->classes() == 2);
  const sparse_examples set = random_set();
  const batch b = batch_of(set, 0, 10);
  auto ws = m->workspace(10);
  const std::vector<std::uint64_t> keys = ws->touched_rows(b);
  const sparse_logreg hashing(1048576, kFeatureHashSeed);
  std::set<std::uint64_t> expected;
  for (std::uint64_t k : b.keys) expected.insert(hashing.row_of(k));
  CHECK(keys == std::vector<std::uint64_t>(expected.begin(), expected.end()));
  const std::vector<float> rows = random_rows(keys.size(), 0.5f, 1);
  const float bias = 0.25f;
  const float* scores = ws->scores(&bias, rows.data(), b);
  logreg_batch direct(hashing);
  direct.gather(set, 0, 10);
  const std::vector<float>& z = direct.logits(rows.data(), bias);
  for (std::size_t i = 0; i < 10; ++i) {
    CHECK(scores[2 * i] == 0.0f);
    CHECK(scores[2 * i + 1] == z[i]);
  }
  CHECK_THROWS_AS(ws->scores(&bias, b), std::logic_error);
  CHECK_THROWS_AS(ws->loss(&bias, b), std::logic_error);
}

TEST_CASE("logreg's row and bias gradients match central finite differences") {
  const sparse_examples set = random_set();
  const batch b = batch_of(set, 3, 23);
  const auto m = built("logreg", 64);  // 120 features in 64 rows: rows are shared
  const std::size_t keys = m->workspace(20)->touched_rows(b).size();
  CHECK(keys < 120);
  check_gradient(*m, b, random_rows(keys, 0.5f, 2), -0.3f);
}

TEST_CASE("the built-in sparse models refuse dense data and more than two classes") {
  CHECK_THROWS_WITH_AS(
      make_builtin_model({"logreg", {}}, model_request{data_shape{{28, 28, 1}}, 10, 0.0f, {}}),
      "logreg: needs sparse data (--data-format=libsvm), not examples of 784 features",
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(make_builtin_model({"fm", {}}, model_request{data_shape{{0}}, 3, 0.0f, {}}),
                       "fm: a binary classifier, but the data has 3 classes",
                       std::invalid_argument);
  CHECK_THROWS_AS(built("logreg", 0), std::invalid_argument);
  CHECK_THROWS_AS(built("fm", 16, 0), std::invalid_argument);
  // A dense batch has no sparse rows to hash.
  batch dense;
  dense.size = 1;
  dense.input_size = 1;
  dense.x = {1.0f};
  dense.y = {0};
  CHECK_THROWS_AS(built("logreg", 16)->workspace(1)->touched_rows(dense), std::invalid_argument);
}

TEST_CASE("fm declares rows of a weight and k factors, drawn with stddev 0.01") {
  const auto m = built("fm", 4096, 4);
  const model_layout l = m->layout();
  CHECK(l.to_string() == "fm 4096-4");
  CHECK(l.variables_text() == "bias 1x1,weights rows 4096x5");
  CHECK(only_row_variable(l)->init.kind == init_kind::truncated_normal);
  CHECK(only_row_variable(l)->init.stddev == 0.01f);
  CHECK(m->classes() == 2);
  CHECK(only_row_variable(built("fm", 16)->layout())->cols == 9);  // --fm-factors 8
}

TEST_CASE("fm's logits are the pairwise sum by hand, its gradients central differences") {
  // One example: features 0 and 1 with values 2 and 3 in rows of their own.
  const auto m = built("fm", std::uint64_t{1} << 40, 2);
  batch b;
  b.size = 1;
  b.offsets = {0, 2};
  b.keys = {0, 1};
  b.values = {2.0f, 3.0f};
  b.y = {1};
  auto ws = m->workspace(1);
  const std::vector<std::uint64_t> keys = ws->touched_rows(b);
  REQUIRE(keys.size() == 2);
  const sparse_logreg hashing(std::uint64_t{1} << 40, kFeatureHashSeed);
  const bool in_order = hashing.row_of(0) < hashing.row_of(1);
  std::vector<float> a = {0.5f, 0.1f, 0.2f}, c = {-0.25f, 0.3f, -0.4f};
  std::vector<float> rows = in_order ? a : c;
  rows.insert(rows.end(), (in_order ? c : a).begin(), (in_order ? c : a).end());
  const float bias = 0.125f;
  // bias + 2 w0 + 3 w1 + 2 * 3 * <v0, v1>
  const double expected = 0.125 + 2 * 0.5 + 3 * -0.25 + 6 * (0.1 * 0.3 + 0.2 * -0.4);
  CHECK(ws->scores(&bias, rows.data(), b)[1] == doctest::Approx(expected).epsilon(1e-6));
  check_gradient(*m, b, rows, bias);
  // Batches of many examples, rows shared between features.
  const sparse_examples set = random_set();
  const auto small = built("fm", 64, 3);
  const batch many = batch_of(set, 0, 20);
  const std::size_t touched = small->workspace(20)->touched_rows(many).size();
  check_gradient(*small, many, random_rows(touched * 4, 0.4f, 3), 0.2f);
}

TEST_CASE("logreg trained through the model interface equals the single-process trainer") {
  planted_spec spec;
  spec.vocabulary = 5000;
  spec.informative = 500;
  const planted_model planted(spec);
  const sparse_examples train = planted_sampler(planted, 0).next(3000);
  const std::uint64_t n = 1024;
  logreg_settings settings;
  settings.rows = n;
  settings.hash_seed = kFeatureHashSeed;
  settings.learning_rate = 0.3f;
  logreg_trainer trainer(settings);
  trainer.train(train);

  const auto m = built("logreg", n);
  sparse_table weights({n, 1, {}, 0, {update_rule::adagrad}});
  sparse_table bias({1, 1, {}, 0, {update_rule::adagrad}});
  auto ws = m->workspace(100);
  std::vector<float> grad(1), row_grad;
  for (std::size_t begin = 0; begin < train.size(); begin += 100) {
    const batch b = batch_of(train, begin, begin + 100);
    const std::vector<std::uint64_t> keys = ws->touched_rows(b);
    const std::vector<float> rows = weights.pull(keys);
    const float p = bias.pull({0})[0];
    row_grad.resize(keys.size());
    ws->loss_and_gradient(&p, rows.data(), b, grad.data(), row_grad.data());
    REQUIRE_FALSE(weights.push({keys, row_grad}, settings.learning_rate));
    REQUIRE_FALSE(bias.push({{0}, grad}, settings.learning_rate));
  }
  CHECK(bias.pull({0})[0] == trainer.bias());
  CHECK(weights.rows_held() == trainer.weights().rows_held());
  const row_dump ours = weights.dump(0, n), theirs = trainer.weights().dump(0, n);
  CHECK(ours.keys == theirs.keys);
  CHECK(ours.values == theirs.values);
  CHECK(ours.accumulators == theirs.accumulators);
}

// The share of (positive, negative) pairs whose logits are in the right
// order, ties counting half: the AUC without the rank-sum shortcut.
double pairwise_auc(const std::vector<float>& logits, const std::vector<std::uint8_t>& labels) {
  double right = 0;
  double pairs = 0;
  for (std::size_t p = 0; p < labels.size(); ++p) {
    if (labels[p] != 1) continue;
    for (std::size_t n = 0; n < labels.size(); ++n) {
      if (labels[n] != 0) continue;
      pairs += 1;
      right += logits[p] > logits[n] ? 1.0 : logits[p] == logits[n] ? 0.5 : 0.0;
    }
  }
  return right / pairs;
}

TEST_CASE("evaluation over a row source reads the rows chunk by chunk, with log loss and AUC") {
  planted_spec spec;
  spec.vocabulary = 5000;
  spec.informative = 500;
  const planted_model planted(spec);
  const sparse_examples test = planted_sampler(planted, 1).next(2500);
  const std::uint64_t n = 4096;
  const auto m = built("logreg", n);
  // Weights of a hash of their key, as a shard would answer.
  std::size_t calls = 0;
  const row_source rows = [&](const std::vector<std::uint64_t>& keys) {
    ++calls;
    CHECK(std::is_sorted(keys.begin(), keys.end()));
    std::vector<float> values;
    for (std::uint64_t k : keys) values.push_back(static_cast<float>(k % 7) / 7.0f - 0.4f);
    return values;
  };
  const float bias = -0.5f;
  const accuracy_report r = evaluate(*m, &bias, rows, libsvm_set(test));
  CHECK(calls == 3);  // chunks of 1000, 1000, 500
  logreg_batch direct(sparse_logreg(n, kFeatureHashSeed));
  const std::vector<std::uint64_t> keys = direct.gather(test, 0, test.size());
  const std::vector<float> weights = rows(keys);
  const binary_metrics expected = score_logits(direct.logits(weights.data(), bias), test.labels);
  CHECK(r.log_loss == doctest::Approx(expected.log_loss).epsilon(1e-6));
  CHECK(r.auc == doctest::Approx(expected.auc).epsilon(1e-12));
  CHECK(r.overall == doctest::Approx(expected.accuracy).epsilon(1e-12));
  // The AUC by its definition, pair by pair: any slip in the rank statistic
  // (an inverted order, ties counted whole) shows here.
  CHECK(r.auc == doctest::Approx(pairwise_auc(direct.logits(weights.data(), bias), test.labels))
                     .epsilon(1e-12));
  // A source that answers too few values is an error, not a read past its end.
  const row_source short_source = [](const std::vector<std::uint64_t>&) {
    return std::vector<float>(1);
  };
  CHECK_THROWS_AS(evaluate(*m, &bias, short_source, libsvm_set(test)), std::invalid_argument);
}

}  // namespace downpour::test_sparse_models
