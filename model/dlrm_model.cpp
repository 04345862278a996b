// --model dlrm: its tables, its graph and how it reads a Criteo batch.
#include <cmath>
#include <stdexcept>
#include <string>

#include "model/criteo_reader.hpp"
#include "model/ctr_models.hpp"
#include "model/ctr_layers.hpp"
#include "model/layers/dot_interaction.hpp"

namespace downpour {
namespace {

constexpr std::size_t kFeatures = 1 + criteo_categorical_fields;  // the bottom output, 26 fields

class dlrm_reader final : public criteo_reader {
 public:
  dlrm_reader(ctr_batch lookups, std::uint64_t rows)
      : criteo_reader(std::move(lookups)), rows_(rows) {}

 private:
  void look_up(std::size_t example, const criteo_categoricals& features) override {
    for (std::size_t j = 0; j < features.size(); ++j)
      if (features[j] != 0) lookups().look_up(j, example, j, criteo_row(features[j], rows_));
  }
  std::uint64_t rows_;
};

std::vector<ctr_bag> one_bag_per_table() {
  std::vector<ctr_bag> bags;
  for (std::size_t j = 0; j < criteo_categorical_fields; ++j) bags.push_back({j, j + 1});
  return bags;
}

// "N-D-bottom-top": each table's rows, the embedding width, the MLPs' hidden
// units; every variable plain SGD at the job's rate.
criteo_parts dlrm_parts(const dlrm_shape& shape) {
  return {"dlrm",
          criteo_layout_spec(shape.table_rows, shape.embedding_dim,
                             {shape.bottom_units, shape.top_units}),
          {},
          field_embeddings(shape.table_rows, shape.embedding_dim, {}),
          one_bag_per_table(),
          shape.table_rows};
}

class dlrm final : public criteo_design<dlrm, dlrm_reader> {
 public:
  explicit dlrm(const dlrm_shape& shape) : criteo_design(dlrm_parts(shape)), shape_(shape) {}

  template <class T>
  layers::graph<T> graph() const {
    const std::size_t d = shape_.embedding_dim;
    layers::graph<T> g;
    const layers::node numeric = g.input(criteo_integer_fields);
    std::vector<layers::node> features{g.add(
        "bottom", ctr_mlp<T>(criteo_integer_fields, shape_.bottom_units, d, mlp_output::relu),
        numeric)};
    for (std::size_t j = 0; j < criteo_categorical_fields; ++j)
      features.push_back(g.embedding(layers::embedding_bag<T>(d, layers::combiner::sum)));
    layers::dot_interaction<T> interaction(kFeatures, d,
                                           layers::interaction_output::first_then_pairs);
    const std::size_t width = interaction.output_width();
    const layers::node z = g.add(std::move(interaction), features);
    g.add("top", ctr_mlp<T>(width, shape_.top_units, 1, mlp_output::logits), z);
    return g;
  }

 private:
  dlrm_shape shape_;
};

}  // namespace

std::shared_ptr<const ctr_design> dlrm_design(const dlrm_shape& shape) {
  check_embedding_dim("dlrm", shape.embedding_dim);
  check_units("dlrm", "--bottom-units", shape.bottom_units);
  check_units("dlrm", "--top-units", shape.top_units);
  return std::make_shared<dlrm>(shape);
}

std::shared_ptr<const model> make_dlrm(const model_choice& choice, const model_request& request) {
  check_ctr_request("dlrm", request);
  dlrm_shape shape;
  shape.table_rows = choice.sparse_rows;
  shape.embedding_dim = choice.embedding_dim;
  shape.bottom_units = choice.bottom_units;
  shape.top_units = choice.top_units;
  return ctr_model_of(dlrm_design(shape));
}

}  // namespace downpour
