// A classifier composed from layers (model/layers) as a model: a sequential
// network from the examples' features to class logits, trained on the mean
// softmax cross-entropy by network_workspace. The built-in mlp, softmax and
// cnn are such models, and so is a program's own (examples/custom_model):
// it writes the forward structure and declares the variables, the layers do
// the calculus.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

#include "model/layers/sequential.hpp"
#include "model/layout.hpp"
#include "model/model.hpp"

namespace downpour {

// Makes the network afresh: each workspace holds its own layers (their
// buffers are one batch's).
using network_factory = std::function<layers::sequential<float>()>;

struct network_options {
  // The L2 scale of the variables declared `regularized` (the built-in
  // dense models', TensorFlow's l2_loss term). A variable's own `reg` needs
  // none: the runtime's update applies it.
  float l2 = 0.0f;
  // Examples that go forward and straight back at a time (network_workspace);
  // 0: the whole batch.
  std::size_t chunk_rows = 0;
};

// The model over layout whose workspaces run network(). The network's
// variables ("layer scope/name", in the order its layers hold them) must be
// layout's dense variables, the same names and shapes in the same order, and
// its output classes wide; layout has no row variables. Throws
// std::invalid_argument, one line naming layout's kind and the first
// variable that differs, otherwise.
std::shared_ptr<const model> network_model(model_layout layout, std::size_t classes,
                                           network_factory network, network_options options = {});

}  // namespace downpour
