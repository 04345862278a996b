// dlrm and wide_deep (model/ctr_models.hpp) on Criteo lines, and a design of
// one bag without numeric inputs: how a batch becomes keys and bags, and each
// whole model's gradient at its dense parameters and its rows against central
// differences in double.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "bench/support/criteo_planted.hpp"
#include "data/criteo.hpp"
#include "layer_gradients.hpp"
#include "model/criteo_reader.hpp"
#include "model/ctr_layers.hpp"
#include "model/ctr_models.hpp"

namespace test_ctr_models {

using namespace downpour;
using downpour::testing::central_differences;
using downpour::testing::uniform_values;
using downpour::testing::unwritten;
using downpour::testing::worst_relative_error;

namespace {

// n lines of planted Criteo data (small vocabularies: rows repeat) as one batch.
batch criteo_batch(std::size_t n) {
  criteo_spec spec;
  spec.vocabulary_scale = 0.001;
  const criteo_model planted(spec);
  batch b;
  b.size = n;
  b.offsets.push_back(0);
  for (std::size_t i = 0; i < n; ++i) {
    const auto line = planted.draw(0, i);
    const auto label = parse_criteo_line(line.text, b.keys, b.values);
    b.y.push_back(*label);
    b.offsets.push_back(b.keys.size());
  }
  return b;
}

dlrm_shape small_dlrm() {
  dlrm_shape s;
  s.table_rows = 50;
  s.embedding_dim = 3;
  s.bottom_units = {4};
  s.top_units = {5};
  return s;
}

wide_deep_shape small_wide_deep() {
  wide_deep_shape s;
  s.table_rows = 50;
  s.embedding_dim = 3;
  s.hidden_units = {4};
  return s;
}

struct gradient_errors {
  double parameters = 0.0, rows = 0.0;
};

// The design's whole network in double: its loss's gradient at random
// parameters and rows against central differences.
gradient_errors check_model(const ctr_design& design, const batch& b) {
  auto reader = design.reader();
  const ctr_batch& in = reader->read(b);
  ctr_network<double> net(design.double_graph(), b.size);
  std::vector<double> params = uniform_values(net.parameter_count(), 5, -0.5, 0.5);
  std::vector<double> rows = uniform_values(in.values(), 6, -0.5, 0.5);
  auto loss = [&] {
    std::vector<double> g(params.size()), rg(rows.size());
    return net.loss_and_gradient(params.data(), rows.data(), in, b.y.data(), g.data(), rg.data());
  };
  std::vector<double> grad = unwritten(params.size()), row_grad = unwritten(rows.size());
  net.loss_and_gradient(params.data(), rows.data(), in, b.y.data(), grad.data(), row_grad.data());
  gradient_errors e;
  e.parameters = worst_relative_error(grad, central_differences(loss, params));
  e.rows = worst_relative_error(row_grad, central_differences(loss, rows));
  MESSAGE("worst relative error at the parameters " << e.parameters << ", at the rows " << e.rows);
  return e;
}

}  // namespace

TEST_CASE("a Criteo batch becomes ascending keys, each field's rows in its own table's range") {
  const batch b = criteo_batch(6);
  const auto design = dlrm_design(small_dlrm());
  auto reader = design->reader();
  const ctr_batch& in = reader->read(b);
  const auto& keys = in.keys();
  CHECK(std::is_sorted(keys.begin(), keys.end()));
  CHECK(std::adjacent_find(keys.begin(), keys.end()) == keys.end());
  CHECK(in.bags() == criteo_categorical_fields);
  std::size_t values = 0;
  for (std::size_t j = 0; j < in.bags(); ++j) {
    const ctr_table& t = design->tables()[j];
    CHECK(t.first_key == j * 50);
    const ctr_block& block = in.block(j);
    CHECK(block.first_value == values);
    values += block.rows * block.cols;
    const auto lists = in.lists(j);
    for (std::size_t e = 0; e < b.size; ++e)
      CHECK(lists.offsets[e + 1] - lists.offsets[e] <= 1);  // one value per field, or none
  }
  CHECK(values == keys.size() * 3);
  CHECK(in.values() == values);
  // The integer fields are the numeric inputs: log(1 + x), 0 when missing.
  for (std::uint64_t k = b.offsets[0]; k < b.offsets[1]; ++k)
    if (b.keys[k] < criteo_integer_fields) CHECK(in.numerics()[b.keys[k]] == b.values[k]);
}

TEST_CASE("wide_deep's linear bag reads features and crosses, one width-1 block over both tables") {
  const batch b = criteo_batch(4);
  const auto design = wide_deep_design(small_wide_deep());
  CHECK(design->tables()[0].name == "linear/features");
  CHECK(design->tables()[1].name == "linear/crosses");
  CHECK(design->tables()[2].name == "embeddings/C1");
  auto reader = design->reader();
  const ctr_batch& in = reader->read(b);
  CHECK(in.bags() == 1 + criteo_categorical_fields);
  CHECK(in.block(0).first_value == 0);
  CHECK(in.block(0).cols == 1);
  CHECK(in.block(1).first_value == in.block(0).rows);
  const auto lists = in.lists(0);
  // Each example: its present fields, and the crosses of present neighbours.
  for (std::size_t e = 0; e < b.size; ++e) {
    std::size_t fields = 0;
    for (std::uint64_t k = b.offsets[e]; k < b.offsets[e + 1]; ++k)
      fields += b.keys[k] >= criteo_integer_fields ? 1 : 0;
    CHECK(lists.offsets[e + 1] - lists.offsets[e] > fields);
  }
}

TEST_CASE("dlrm's gradient at its dense parameters and every row matches central differences") {
  const auto e = check_model(*dlrm_design(small_dlrm()), criteo_batch(4));
  CHECK(e.parameters < 1e-6);
  CHECK(e.rows < 1e-6);
}

TEST_CASE("wide_deep's gradient at its dense parameters and every row matches central differences") {
  const auto e = check_model(*wide_deep_design(small_wide_deep()), criteo_batch(4));
  CHECK(e.parameters < 1e-6);
  CHECK(e.rows < 1e-6);
}

namespace {

// One table, every feature's row summed in one bag, no numeric inputs: a
// program's own design on libsvm features (examples/embedding_model).
class bag_only_reader final : public ctr_reader {
 public:
  explicit bag_only_reader(const std::vector<ctr_table>& tables)
      : lookups_(tables, {{0, 1}}, 0), rows_(tables[0].rows) {}
  const ctr_batch& read(const batch& b) override {
    lookups_.start(b.size);
    for (std::size_t e = 0; e < b.size; ++e)
      for (std::uint64_t k = b.offsets[e]; k < b.offsets[e + 1]; ++k)
        lookups_.look_up(0, e, 0, b.keys[k] % rows_);
    lookups_.finish();
    return lookups_;
  }

 private:
  ctr_batch lookups_;
  std::uint64_t rows_;
};

class bag_only final : public ctr_design {
 public:
  bag_only()
      : tables_(ctr_tables({{.name = "embedding", .rows = 40, .cols = 3,
                             .update = {.rule = update_rule::adagrad, .learning_rate = 0.1f},
                             .reg = {.l2 = 0.01f}}})) {}
  model_layout layout() const override {
    return ctr_layout("bag_only", "40", float_graph().variables(), {}, tables_);
  }
  const std::vector<ctr_table>& tables() const override { return tables_; }
  std::unique_ptr<ctr_reader> reader() const override {
    return std::make_unique<bag_only_reader>(tables_);
  }
  layers::graph<float> float_graph() const override { return graph<float>(); }
  layers::graph<double> double_graph() const override { return graph<double>(); }

 private:
  template <class T>
  layers::graph<T> graph() const {
    layers::graph<T> g;
    const layers::node bag = g.embedding(layers::embedding_bag<T>(3, layers::combiner::sum));
    g.add("output", ctr_mlp<T>(3, {4}, 1, mlp_output::logits), bag);
    return g;
  }
  std::vector<ctr_table> tables_;
};

}  // namespace

TEST_CASE("a design without numeric inputs feeds its graph bags alone; its gradient matches "
          "central differences and its table keeps its own update and regularizer") {
  const bag_only design;
  const auto e = check_model(design, criteo_batch(4));
  CHECK(e.parameters < 1e-6);
  CHECK(e.rows < 1e-6);
  const model_layout l = design.layout();
  CHECK(l.variables().front().name == "output/layer1/weights");
  const auto& table = l.row_variable("embedding");
  CHECK(table.update.rule == update_rule::adagrad);
  CHECK(table.reg.l2 == 0.01f);
}

TEST_CASE("the CTR models refuse dense data, more than two classes and empty shapes, in one line") {
  model_request dense;
  dense.data.dims = {784};
  dense.classes = 2;
  CHECK_THROWS_WITH_AS(make_dlrm({}, dense),
                       "dlrm: needs Criteo data (--data-format=criteo), not examples of 784 "
                       "features",
                       std::invalid_argument);
  model_request many;
  many.data.dims = {0};
  many.classes = 3;
  CHECK_THROWS_WITH_AS(make_wide_deep({}, many),
                       "wide_deep: a binary classifier, but the data has 3 classes",
                       std::invalid_argument);
  dlrm_shape no_width = small_dlrm();
  no_width.embedding_dim = 0;
  CHECK_THROWS_WITH_AS(dlrm_design(no_width), "dlrm: --embedding-dim 0 (expected at least 1)",
                       std::invalid_argument);
  wide_deep_shape no_units = small_wide_deep();
  no_units.hidden_units = {8, 0};
  CHECK_THROWS_WITH_AS(wide_deep_design(no_units),
                       "wide_deep: --hidden-units has a layer of 0 units", std::invalid_argument);
}

TEST_CASE("a CTR model's reader refuses a feature no Criteo line gives, naming the key") {
  batch b = criteo_batch(2);
  b.keys[0] = 20;
  auto reader = dlrm_design(small_dlrm())->reader();
  CHECK_THROWS_WITH_AS(reader->read(b),
                       "criteo: feature key 20 is not one a Criteo line gives (expected 0..12 or "
                       "a categorical field in the top 6 bits; --data-format=criteo)",
                       std::invalid_argument);
}

TEST_CASE("dlrm's layout: the MLPs' dense variables, then 26 tables whose keys are the batch's") {
  const auto design = dlrm_design(small_dlrm());
  const model_layout l = design->layout();
  CHECK(l.to_string() == "dlrm 50-3-4-5");
  REQUIRE(l.variables().size() == 8);
  CHECK(l.variables()[0].name == "bottom/layer1/weights");
  CHECK(l.variables()[3].name == "bottom/layer2/biases");
  CHECK(l.variables()[4].name == "top/layer1/weights");
  CHECK(l.variables()[4].rows == 3 + 351);
  CHECK(l.variables()[7].name == "top/layer2/biases");
  const auto& rows = l.row_variables();
  REQUIRE(rows.size() == criteo_categorical_fields);
  for (std::size_t j = 0; j < rows.size(); ++j) {
    CHECK(rows[j].name == design->tables()[j].name);
    CHECK(rows[j].first_key == design->tables()[j].first_key);
    CHECK(rows[j].cols == 3);
    CHECK(rows[j].update.rule == update_rule::sgd);
  }
  for (const auto& v : l.variables()) CHECK(v.update.rule == update_rule::sgd);
  CHECK(ctr_model_of(design)->predicts() == prediction::probability);
}

TEST_CASE("wide_deep's layout: FTRL for the linear tables, AdaGrad at 0.05 for the deep part") {
  const model_layout l = wide_deep_design(small_wide_deep())->layout();
  CHECK(l.to_string() == "wide_deep 50-3-4");
  CHECK(l.variables().front().name == "deep/layer1/weights");
  CHECK(l.variables().front().rows == criteo_integer_fields + 26 * 3);
  for (const auto& v : l.variables()) {
    CHECK(v.update.rule == update_rule::adagrad);
    CHECK(v.update.learning_rate == 0.05f);
  }
  const auto& linear = l.row_variable("linear/features");
  CHECK(linear.update.rule == update_rule::ftrl);
  CHECK(linear.update.learning_rate == doctest::Approx(1.0 / std::sqrt(51.0)));
  CHECK(l.row_variable("linear/crosses").first_key == 50);
  CHECK(l.row_variable("embeddings/C26").update.rule == update_rule::adagrad);
  CHECK(l.row_variables().size() == 28);
}

}  // namespace test_ctr_models
