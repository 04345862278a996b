// --model wide_deep: its tables, its graph and how it reads a Criteo batch.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "model/criteo_reader.hpp"
#include "model/ctr_layers.hpp"
#include "model/ctr_models.hpp"
#include "model/layers/concatenate.hpp"
#include "model/layers/elementwise_sum.hpp"
#include "model/sparse_hash.hpp"

namespace downpour {
namespace {

constexpr std::size_t kFeaturesTable = 0, kCrossesTable = 1, kFirstEmbedding = 2;
constexpr std::size_t kLinearBag = 0;  // then one bag per field's embedding
// The linear part's columns: 26 fields and 25 crosses.
constexpr std::size_t kLinearColumns = 2 * criteo_categorical_fields - 1;

// TF's DNNLinearCombinedClassifier: FTRL at min(0.2, 1 / sqrt(linear columns))
// for the linear part, AdaGrad at 0.05 for the deep one.
update_spec linear_update() {
  update_spec u;
  u.rule = update_rule::ftrl;
  u.learning_rate =
      std::min(0.2f, static_cast<float>(1.0 / std::sqrt(static_cast<double>(kLinearColumns))));
  return u;
}

update_spec deep_update() {
  update_spec u;
  u.rule = update_rule::adagrad;
  u.learning_rate = 0.05f;
  return u;
}

class wide_deep_reader final : public criteo_reader {
 public:
  wide_deep_reader(ctr_batch lookups, std::uint64_t rows)
      : criteo_reader(std::move(lookups)), rows_(rows) {}

 private:
  // The linear bag first (features, then crosses: its tables' order), then
  // the fields' embeddings.
  void look_up(std::size_t example, const criteo_categoricals& f) override {
    for (std::uint64_t key : f)
      if (key != 0) lookups().look_up(kLinearBag, example, kFeaturesTable, mix64(key) % rows_);
    for (std::size_t j = 0; j + 1 < f.size(); ++j)
      if (f[j] != 0 && f[j + 1] != 0)
        lookups().look_up(kLinearBag, example, kCrossesTable, mix64(f[j], f[j + 1]) % rows_);
    for (std::size_t j = 0; j < f.size(); ++j)
      if (f[j] != 0)
        lookups().look_up(1 + j, example, kFirstEmbedding + j, criteo_row(f[j], rows_));
  }
  std::uint64_t rows_;
};

std::vector<ctr_table> wide_deep_tables(const wide_deep_shape& shape) {
  std::vector<ctr_table> tables{{"linear/features", shape.table_rows, 1, {}, linear_update()},
                                {"linear/crosses", shape.table_rows, 1, {}, linear_update()}};
  for (auto& t : field_embeddings(shape.table_rows, shape.embedding_dim, deep_update()))
    tables.push_back(std::move(t));
  return tables;
}

// The linear bag of both linear tables, then one bag per field's embedding.
std::vector<ctr_bag> wide_deep_bags() {
  std::vector<ctr_bag> bags{{kFeaturesTable, kFirstEmbedding}};
  for (std::size_t j = 0; j < criteo_categorical_fields; ++j)
    bags.push_back({kFirstEmbedding + j, kFirstEmbedding + j + 1});
  return bags;
}

// "N-D-hidden": each table's rows, the embedding width, the deep part's units.
criteo_parts wide_deep_parts(const wide_deep_shape& shape) {
  return {"wide_deep",
          criteo_layout_spec(shape.table_rows, shape.embedding_dim, {shape.hidden_units}),
          deep_update(),
          wide_deep_tables(shape),
          wide_deep_bags(),
          shape.table_rows};
}

class wide_deep final : public criteo_design<wide_deep, wide_deep_reader> {
 public:
  explicit wide_deep(const wide_deep_shape& shape)
      : criteo_design(wide_deep_parts(shape)), shape_(shape) {}

  template <class T>
  layers::graph<T> graph() const {
    const std::size_t d = shape_.embedding_dim;
    layers::graph<T> g;
    std::vector<layers::node> deep{g.input(criteo_integer_fields)};
    const layers::node linear = g.embedding(layers::embedding_bag<T>(1, layers::combiner::sum));
    std::vector<std::size_t> widths{criteo_integer_fields};
    for (std::size_t j = 0; j < criteo_categorical_fields; ++j) {
      deep.push_back(g.embedding(layers::embedding_bag<T>(d, layers::combiner::sum)));
      widths.push_back(d);
    }
    const layers::node joined = g.add(layers::concatenate<T>(widths), deep);
    const layers::node logit = g.add(
        "deep", ctr_mlp<T>(g.width(joined), shape_.hidden_units, 1, mlp_output::logits), joined);
    g.add(layers::elementwise_sum<T>(2, 1), {linear, logit});
    return g;
  }

 private:
  wide_deep_shape shape_;
};

}  // namespace

std::shared_ptr<const ctr_design> wide_deep_design(const wide_deep_shape& shape) {
  check_embedding_dim("wide_deep", shape.embedding_dim);
  check_units("wide_deep", "--hidden-units", shape.hidden_units);
  return std::make_shared<wide_deep>(shape);
}

std::shared_ptr<const model> make_wide_deep(const model_choice& choice,
                                            const model_request& request) {
  check_ctr_request("wide_deep", request);
  wide_deep_shape shape;
  shape.table_rows = choice.sparse_rows;
  shape.embedding_dim = choice.embedding_dim;
  shape.hidden_units = choice.hidden_units;
  return ctr_model_of(wide_deep_design(shape));
}

}  // namespace downpour
