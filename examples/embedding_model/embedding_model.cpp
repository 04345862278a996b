// A model of your own with an embedding table on the parameter servers: each
// example's libsvm features pick rows of one table (8 floats a row, AdaGrad
// of its own), summed into a bag that feeds a 16-unit ReLU layer and one
// logit, the probability of label 1. A worker pulls only the rows its batch
// touches and pushes back their gradient; the layers do the calculus.
#include <model/ctr_network.hpp>
#include <model/layers/activations.hpp>
#include <model/layers/dense.hpp>
#include <runtime/cli/app.hpp>
#include <stdexcept>
#include <string>

namespace {

using namespace downpour;

constexpr std::size_t width = 8, hidden_units = 16;

// A batch's lookups: example e's features, hashed into the table's rows, all
// in bag 0 (the network's one embedding), read from table 0.
class libsvm_lookups final : public ctr_reader {
 public:
  explicit libsvm_lookups(const std::vector<ctr_table>& tables)
      : lookups_(tables, {{.first_table = 0, .end_table = 1}}, 0), rows_(tables[0].rows) {}
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

class embedding_model final : public ctr_design {
 public:
  explicit embedding_model(std::uint64_t rows)
      : tables_(ctr_tables({{.name = "embedding",
                             .rows = rows,
                             .cols = width,
                             .init = {init_kind::truncated_normal, 0.05f},
                             .update = {.rule = update_rule::adagrad, .learning_rate = 0.1f}}})) {}
  // The graph's dense variables (plain SGD at the job's --learning-rate),
  // then the table.
  model_layout layout() const override {
    return ctr_layout("embedding_model", std::to_string(tables_[0].rows), float_graph().variables(),
                      {.rule = update_rule::sgd}, tables_);
  }
  const std::vector<ctr_table>& tables() const override { return tables_; }
  std::unique_ptr<ctr_reader> reader() const override {
    return std::make_unique<libsvm_lookups>(tables_);
  }
  layers::graph<float> float_graph() const override { return graph<float>(); }
  layers::graph<double> double_graph() const override { return graph<double>(); }

 private:
  template <class T>
  layers::graph<T> graph() const {
    layers::graph<T> g;
    const layers::node bag = g.embedding(layers::embedding_bag<T>(width, layers::combiner::sum));
    const layers::node hidden = g.add("hidden", layers::dense<T>(width, hidden_units), bag);
    const layers::node relu = g.add(layers::relu<T>(hidden_units), hidden);
    g.add("output", layers::dense<T>(hidden_units, 1), relu);
    return g;
  }

  std::vector<ctr_table> tables_;
};

// --sparse-rows: the table's rows (2^20 unless told).
std::shared_ptr<const model> make_embedding_model(const model_request& r) {
  if (r.data.features() != 0 || r.classes > 2)
    throw std::invalid_argument(
        "embedding_model needs sparse data of 2 classes "
        "(--data-format=libsvm), not examples of " +
        std::to_string(r.data.features()) + " features");
  return ctr_model_of(std::make_shared<embedding_model>(r.choice.sparse_rows));
}

}  // namespace

int main(int argc, char** argv) {
  return downpour::run_downpour(argc, argv, make_embedding_model);
}
