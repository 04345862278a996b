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
#include <memory>
#include <utility>
#include <string>
#include <vector>

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

// Immutable once made; shared by every actor of a node.
class model {
 public:
  virtual ~model() = default;
  virtual model_layout layout() const = 0;
  virtual std::size_t classes() const = 0;
  // batch_size is the most examples a batch passed to it will hold.
  virtual std::unique_ptr<model_workspace> workspace(std::size_t batch_size) const = 0;
};

// The built-in model the command line names (--model, --hidden-units).
// make_builtin_model reads it; a program with its own model may ignore it.
struct model_choice {
  std::string name = "mlp";
  std::vector<std::size_t> hidden_units{500};
};

// What a model is built for: the data's example shape and classes, and the
// job's L2 scale (options: --l2).
struct model_request {
  data_shape data;
  std::size_t classes = 0;
  float l2 = 0.0f;
  model_choice choice;
};

// Per-class and overall accuracy of params on a data set.
struct accuracy_report {
  double overall = 0.0;
  std::vector<double> per_class;  // NaN-free: a class with no examples reads 0
};

// The arg max of the model's scores against the labels, in chunks of at
// most 1000 examples (one workspace). Throws data_error for a label the
// model has no class for.
accuracy_report evaluate(const model& m, const float* params, const dataset& set);

}  // namespace downpour
