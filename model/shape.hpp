// The model's parameters as ONE flat float buffer in TensorFlow's variable
// creation order, with named views; shards take contiguous ranges of it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace downpour {

// One variable inside the flat buffer.
struct variable_info {
  std::string name;    // TensorFlow name, e.g. "layer1/weights"
  std::size_t offset;  // first float in the flat buffer
  std::size_t rows;    // [rows, cols] row-major; biases have rows == 1
  std::size_t cols;
  bool regularized;    // weights carry the L2 term, biases do not
  std::size_t size() const { return rows * cols; }
};

// The MLP input -> hidden (ReLU) -> classes (logits).
struct model_shape {
  std::size_t input = 784;
  std::size_t hidden = 500;
  std::size_t classes = 10;

  // layer1/weights, layer1/biases, layer2/weights, layer2/biases.
  std::vector<variable_info> variables() const;
  std::size_t size() const;  // 397,510 for 784-500-10
  std::string to_string() const;  // "784-500-10"
  friend bool operator==(const model_shape& a, const model_shape& b) {
    return a.input == b.input && a.hidden == b.hidden && a.classes == b.classes;
  }
  friend bool operator!=(const model_shape& a, const model_shape& b) { return !(a == b); }
};

// Index of the four variables in variables().
enum variable_index : std::size_t { w1 = 0, b1 = 1, w2 = 2, b2 = 3 };

}  // namespace downpour
