// The variables a model declares, laid out as ONE flat float buffer in
// declaration order (TensorFlow's variable creation order). Shards take
// contiguous ranges of it; checkpoints, export and inspect name them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
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

// Where a variable's values live. dense: in the flat buffer, moved whole on
// every pull and push. rows: a sparse variable of `rows` rows (up to 2^63)
// of `cols` floats, held by the shards by row range; a worker pulls and
// pushes only the rows its batch touches (keys), never the whole variable.
enum class storage { dense, rows };

// What a model declares: a [rows, cols] row-major variable (biases and
// vectors have rows == 1; a convolution's filters are [kh*kw*in, out]).
struct variable_spec {
  std::string name;  // TensorFlow-style, e.g. "layer1/weights"
  std::size_t rows = 0;
  std::size_t cols = 0;
  initializer init;
  bool regularized = false;  // carries the L2 term of the loss (dense only)
  storage store = storage::dense;
};

// The model's sparse variable (storage::rows), outside the flat buffer.
// Rows never pushed read as their initial value: zeros, or a truncated
// normal drawn from a hash of (seed, row, column) (model/sparse_table.hpp).
struct row_variable_info {
  std::string name;
  std::uint64_t rows = 0;
  std::size_t cols = 0;
  initializer init;
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
  // dimension, sizes that overflow, a second storage::rows variable (one
  // per model), or a regularized one.
  model_layout(std::string kind, std::string spec, const std::vector<variable_spec>& vars);

  const std::string& kind() const { return kind_; }
  const std::string& spec() const { return spec_; }
  // The dense variables, in the flat buffer in declaration order.
  const std::vector<variable_info>& variables() const { return vars_; }
  std::size_t size() const { return size_; }  // floats of the dense variables
  // The sparse variable, if the model declares one.
  const std::optional<row_variable_info>& row_variable() const { return rows_; }
  std::string to_string() const;  // "mlp 784-500-10"
  // "layer1/weights 784x500,layer1/biases 1x500,...": names and shapes in
  // order; a sparse variable last, as "weights rows 1048576x1".
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
  std::optional<row_variable_info> rows_;
};

}  // namespace downpour
