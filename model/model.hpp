// What the runtime needs from a model, and nothing more: its variables, and
// per batch its loss, gradient and class scores. Shards, placement,
// checkpoints, sync/async/ssp, the EMA, eval, inspect and export work on the
// layout alone; only workers and evaluation call into a model.
//
// Implement `model` and `model_workspace` to train your own network
// (examples/custom_model). Built-in: model/mlp.hpp (mlp and softmax) and
// model/cnn.hpp, chosen by make_builtin_model (model/builtin.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "data/batch_source.hpp"
#include "data/batcher.hpp"
#include "data/dataset.hpp"
#include "model/layout.hpp"

namespace downpour {

// Buffers for one batch size, made once per worker: a training step should
// allocate nothing. Not shared between threads.
class model_workspace {
 public:
  virtual ~model_workspace() = default;

  // The loss of the batch at params (including the L2 term of the
  // regularized variables); writes d(loss)/d(params) into grad
  // (layout().size() floats, every one written).
  virtual float loss_and_gradient(const float* params, const batch& b, float* grad) = 0;

  // The same loss without the gradient.
  virtual float loss(const float* params, const batch& b) = 0;

  // Class scores (logits) of the batch, b.size x classes row-major, valid
  // until the next call; evaluation takes the arg max.
  virtual const float* scores(const float* params, const batch& b) = 0;

  // ---- models with a sparse variable (model_layout::row_variable) ----
  // A worker pulls only the rows a batch touches and pushes their gradient.
  // Dense models keep the defaults: they touch no rows, and the calls below
  // forward to the three above.

  // The rows of the sparse variable the batch touches, ascending and
  // unique: the keys to pull. Valid until the next call.
  virtual const std::vector<std::uint64_t>& touched_rows(const batch& b);

  // As above, given rows: the values of touched_rows(b), cols floats per
  // key in that order. Writes row_grad: d(loss)/d(rows), the same shape.
  virtual float loss_and_gradient(const float* params, const float* rows, const batch& b,
                                  float* grad, float* row_grad);
  virtual const float* scores(const float* params, const float* rows, const batch& b);
};

// A model_workspace over a concrete workspace type with the same three
// members (the built-in models' templated float workspaces).
template <class Workspace>
class workspace_adapter final : public model_workspace {
 public:
  template <class... Args>
  explicit workspace_adapter(Args&&... args) : ws_(std::forward<Args>(args)...) {}
  float loss_and_gradient(const float* params, const batch& b, float* grad) override {
    return ws_.loss_and_gradient(params, b, grad);
  }
  float loss(const float* params, const batch& b) override { return ws_.loss(params, b); }
  const float* scores(const float* params, const batch& b) override {
    return ws_.scores(params, b);
  }

 private:
  Workspace ws_;
};

// What a model's scores predict, and so what evaluation measures:
//  - classes: classes() logits per example; the arg max is the prediction
//    (accuracy, per class and overall; the log loss of softmax);
//  - probability: of label 1 (classes() == 2), two scores per example,
//    [0, logit], the two-class logits whose softmax is sigmoid(logit)
//    (accuracy at 0.5, log loss, AUC);
//  - value: one score per example, the predicted value of the label (RMSE).
enum class prediction { classes, probability, value };

// "classes", "probability", "value".
const char* to_string(prediction p);

// Immutable once made; shared by every actor of a node.
class model {
 public:
  virtual ~model() = default;
  virtual model_layout layout() const = 0;
  virtual std::size_t classes() const = 0;
  virtual prediction predicts() const { return prediction::classes; }
  // batch_size is the most examples a batch passed to it will hold.
  virtual std::unique_ptr<model_workspace> workspace(std::size_t batch_size) const = 0;
};

// The built-in model the command line names (--model, --hidden-units,
// --sparse-rows, --fm-factors, --embedding-dim, --bottom-units, --top-units). make_builtin_model reads it; a program with
// its own model may ignore it.
struct model_choice {
  std::string name = "mlp";
  std::vector<std::size_t> hidden_units{500};
  std::uint64_t sparse_rows = std::uint64_t{1} << 20;  // logreg, fm: rows features hash into
  std::size_t fm_factors = 8;                          // fm
  update_rule sparse_update = update_rule::sgd;        // logreg, fm: their rows' (--sparse-optimizer)
  // dlrm, wide_deep (model/ctr_models.hpp); sparse_rows: rows of each table,
  // hidden_units: wide_deep's deep part.
  std::size_t embedding_dim = 16;
  std::vector<std::size_t> bottom_units{512, 256, 64};  // dlrm
  std::vector<std::size_t> top_units{512, 256};         // dlrm
};

// What a model is built for: the data's example shape and classes, and the
// job's L2 scale (options: --l2).
struct model_request {
  data_shape data;
  std::size_t classes = 0;
  float l2 = 0.0f;
  model_choice choice;
};

// How well params fit a data set, by what the model predicts (prediction):
// classes and probability: per-class and overall accuracy and the mean log
// loss (softmax cross-entropy of the true class), with two classes also the
// AUC of the second class's score margin (ties count half); value: the root
// mean squared error against the labels (the accuracies read 0).
struct accuracy_report {
  prediction kind = prediction::classes;
  double overall = 0.0;
  std::vector<double> per_class;  // NaN-free: a class with no examples reads 0
  double log_loss = 0.0;
  double auc = 0.0;  // 0 unless the model has two classes
  double rmse = 0.0;  // value only
  std::size_t examples = 0;
};

// The model's scores against the labels, in chunks of at most 1000
// examples (one workspace). Throws data_error for a label the model has no
// class for (classes and probability).
accuracy_report evaluate(const model& m, const float* params, const dataset& set);

// Where evaluation reads a sparse variable's rows: the values of keys
// (ascending, unique), cols floats each, in that order.
using row_source = std::function<std::vector<float>(const std::vector<std::uint64_t>& keys)>;

// The same for a model with a sparse variable, its rows read from rows
// chunk by chunk (a worker never holds the whole variable).
accuracy_report evaluate(const model& m, const float* params, const row_source& rows,
                         const dataset& set);

// evaluate() of each parameter set (the weights and their moving averages)
// over the batches of source (at most chunk examples each), each batch read
// once; rows: a model's sparse variable, null for a dense model.
std::vector<accuracy_report> evaluate_each(const model& m, const std::vector<const float*>& params,
                                           const row_source* rows, batch_source& source,
                                           std::size_t chunk);

}  // namespace downpour
