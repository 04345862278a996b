// What dlrm and wide_deep share: a graph of layers (model/layers) over a
// batch's numeric inputs and one embedding bag per ctr_batch bag, ending in
// one logit, trained with sigmoid cross-entropy; and the model around it
// (model/model.hpp), predicting a probability. A design says only what is
// its own: its tables, its graph and how it reads a batch (a Criteo one, or
// libsvm features in a program's own model: examples/embedding_model).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "data/batcher.hpp"
#include "model/ctr_batch.hpp"
#include "model/layers/graph.hpp"
#include "model/layers/losses.hpp"
#include "model/model.hpp"

namespace downpour {

// Reads a batch into the design's ctr_batch; the same batch twice is read
// once (a worker asks for its keys, then for its loss with their rows).
class ctr_reader {
 public:
  virtual ~ctr_reader() = default;
  virtual const ctr_batch& read(const batch& b) = 0;
};

class ctr_design {
 public:
  virtual ~ctr_design() = default;
  // The model's variables: the graph's dense ones, then the tables as row
  // variables in order.
  virtual model_layout layout() const = 0;
  virtual const std::vector<ctr_table>& tables() const = 0;
  virtual std::unique_ptr<ctr_reader> reader() const = 0;
  // The graph: numeric inputs first (none when the reader's batches have
  // no numeric width), one embedding per bag in order, one logit out. Both scalars: float trains, double is gradient-checked.
  virtual layers::graph<float> float_graph() const = 0;
  virtual layers::graph<double> double_graph() const = 0;
};

// A design's network at one batch size; not shared between threads.
template <class T>
class ctr_network {
 public:
  ctr_network(layers::graph<T> g, std::size_t max_batch);
  // The mean sigmoid cross-entropy of the labels (0 or 1) given rows (the
  // values of in.keys()); writes d(loss)/d(params) (every dense parameter)
  // and d(loss)/d(rows) (in.values() values).
  T loss_and_gradient(const T* params, const T* rows, const ctr_batch& in,
                      const std::int32_t* labels, T* grad, T* row_grad);
  // One logit per example, valid until the next call.
  layers::const_tensor<T> logits(const T* params, const T* rows, const ctr_batch& in);
  std::size_t parameter_count() const { return graph_.parameter_count(); }

 private:
  const layers::feed<T>& feed_of(const T* rows, const ctr_batch& in);

  layers::graph<T> graph_;
  std::size_t max_batch_;
  layers::sigmoid_cross_entropy_loss<T> loss_;
  std::vector<T> numerics_;
  layers::feed<T> feed_;
  std::vector<layers::tensor<T>> row_gradients_;
};

extern template class ctr_network<float>;
extern template class ctr_network<double>;

// A design's layout: the graph's dense variables, each updated by dense
// (the model adds no L2 of its own: a variable's `reg` is the runtime's),
// then the tables as row variables with their own updates.
model_layout ctr_layout(const std::string& kind, const std::string& spec,
                        std::vector<variable_spec> dense, const update_spec& dense_update,
                        const std::vector<ctr_table>& tables);

// "512,256": a list of units as the options write it.
std::string units_text(const std::vector<std::size_t>& units);

// The design as a model: two classes, a probability, scores [0, logit].
std::shared_ptr<const model> ctr_model_of(std::shared_ptr<const ctr_design> design);

// Throws std::invalid_argument naming kind unless the request is for
// Criteo data (sparse, --data-format=criteo) of at most two classes.
void check_ctr_request(const std::string& kind, const model_request& request);

}  // namespace downpour
