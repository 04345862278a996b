// The variables a model declares, laid out as ONE flat float buffer in
// declaration order (TensorFlow's variable creation order). Shards take
// contiguous ranges of it; checkpoints, export and inspect name them.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace downpour {

// How a variable starts. truncated_normal: tf.truncated_normal_initializer
// (values beyond 2 stddev redrawn, no rescaling), drawn in declaration order
// from one seeded source shared by all variables of the model.
enum class init_kind { zeros, truncated_normal };

struct initializer {
  init_kind kind = init_kind::zeros;
  float stddev = 0.0f;
};

// What a model declares: a [rows, cols] row-major variable (biases and
// vectors have rows == 1; a convolution's filters are [kh*kw*in, out]).
struct variable_spec {
  std::string name;  // TensorFlow-style, e.g. "layer1/weights"
  std::size_t rows = 0;
  std::size_t cols = 0;
  initializer init;
  bool regularized = false;  // carries the L2 term of the loss
};

// One variable inside the flat buffer.
struct variable_info {
  std::string name;
  std::size_t offset = 0;  // first float in the flat buffer
  std::size_t rows = 0;
  std::size_t cols = 0;
  bool regularized = false;
  initializer init;
  std::size_t size() const { return rows * cols; }
};

// A model's identity and variables: what a checkpoint must match to be
// restored into it ("mlp" / "784-500-10", the variables' names and shapes).
class model_layout {
 public:
  model_layout() = default;
  // Throws std::invalid_argument naming the variable for a name that is
  // empty, twice or not TensorFlow's (letters, digits, _ . / -), a zero
  // dimension, or sizes that overflow.
  model_layout(std::string kind, std::string spec, const std::vector<variable_spec>& vars);

  const std::string& kind() const { return kind_; }
  const std::string& spec() const { return spec_; }
  const std::vector<variable_info>& variables() const { return vars_; }
  std::size_t size() const { return size_; }
  std::string to_string() const;  // "mlp 784-500-10"
  // "layer1/weights 784x500,layer1/biases 1x500,...": names and shapes in order.
  std::string variables_text() const;

  // The same kind, spec and variables (names, shapes, regularization), in
  // order; initializers are not compared (a checkpoint does not keep them).
  friend bool operator==(const model_layout& a, const model_layout& b);
  friend bool operator!=(const model_layout& a, const model_layout& b) { return !(a == b); }

 private:
  std::string kind_;
  std::string spec_;
  std::vector<variable_info> vars_;
  std::size_t size_ = 0;
};

}  // namespace downpour
