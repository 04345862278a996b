// The MLP's sizes and the variables they make (model/mlp.hpp trains it).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "model/layers/sequential.hpp"
#include "model/layout.hpp"

namespace downpour {

// input -> hidden layers (ReLU) -> classes; no hidden layer: softmax regression.
struct mlp_spec {
  std::size_t input = 784;
  std::vector<std::size_t> hidden{500};  // empty: softmax regression
  std::size_t classes = 10;

  // "784-500-10".
  std::string text() const;
  // layer1/weights [input, hidden[0]], layer1/biases [1, hidden[0]], ...,
  // layerN/weights [.., classes], layerN/biases: TensorFlow's creation
  // order. Weights start truncated normal (stddev 0.1) and carry the L2
  // term, biases start at zero.
  model_layout layout(const std::string& kind) const;
};

// The MLP as layers: dense and ReLU per hidden layer, then dense to the
// classes' logits; its variables are layout()'s.
template <class T>
layers::sequential<T> mlp_network(const mlp_spec& spec);

}  // namespace downpour
