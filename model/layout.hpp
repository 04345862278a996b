// The variables a model declares, laid out as ONE flat float buffer in
// declaration order (TensorFlow's variable creation order), and its row
// variables in ONE key space. Shards take contiguous ranges of both;
// checkpoints, export and inspect name them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "model/update_rule.hpp"

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
// every pull and push. rows: a sparse variable of `rows` rows of `cols`
// floats, held by the shards by key range; a worker pulls and pushes only
// the rows its batch touches (keys), never the whole variable.
enum class storage { dense, rows };

// What a model declares: a [rows, cols] row-major variable (biases and
// vectors have rows == 1; a convolution's filters are [kh*kw*in, out]).
// Designated initialisers name the fields:
//   {.name = "wide/weights", .rows = 1 << 20, .cols = 1, .store = storage::rows,
//    .update = {.rule = update_rule::ftrl}, .reg = {.l1 = 0.01f}}
struct variable_spec {
  std::string name;  // TensorFlow-style, e.g. "layer1/weights"
  std::uint64_t rows = 0;
  std::size_t cols = 0;
  initializer init;
  // Carries the job's --l2 term of the loss, computed by the model (dense
  // only). Kept while the built-in dense models use it; `reg` replaces it.
  bool regularized = false;
  storage store = storage::dense;
  update_spec update;  // the variable's optimizer
  regularizer reg;     // L1/L2 applied by the runtime's update
};

// A row variable (storage::rows), outside the flat buffer. Its row r is the
// key first_key + r of the model's key space. Rows never pushed read as
// their initial value: zeros, or a truncated normal drawn from a hash of
// (seed, key, column) (model/sparse_table.hpp).
struct row_variable_info {
  std::string name;
  std::uint64_t rows = 0;
  std::size_t cols = 0;
  initializer init;
  update_spec update;
  regularizer reg;
  std::uint64_t first_key = 0;
  std::uint64_t end_key() const { return first_key + rows; }
};

// One variable inside the flat buffer.
struct variable_info {
  std::string name;
  std::size_t offset = 0;  // first float in the flat buffer
  std::size_t rows = 0;
  std::size_t cols = 0;
  bool regularized = false;
  initializer init;
  update_spec update;
  regularizer reg;
  std::size_t size() const { return rows * cols; }
};

// The row variables' key space: keys [0, keys()), each variable a
// contiguous range in declaration order, each key carrying its variable's
// cols floats (a pull's answer, a push's gradient: keys ascending, values
// concatenated in key order).
class row_space {
 public:
  row_space() = default;
  // first_key of each is set from the rows before it. Throws
  // std::invalid_argument naming the variable that takes the total past 2^63.
  explicit row_space(std::vector<row_variable_info> vars);

  const std::vector<row_variable_info>& variables() const { return vars_; }
  bool empty() const { return vars_.empty(); }
  std::uint64_t keys() const { return keys_; }  // total rows
  // Throw std::out_of_range naming the key (or variable, row) outside the space.
  std::size_t variable_of(std::uint64_t key) const;
  std::uint64_t key_of(std::size_t variable, std::uint64_t row) const;
  std::size_t width_of(std::uint64_t key) const { return vars_[variable_of(key)].cols; }
  // The floats of keys (any order): the sum of their widths. Throws
  // std::out_of_range for a key outside, std::length_error on overflow.
  std::size_t values_for(const std::vector<std::uint64_t>& keys) const;
  // The same for every key of [first, last).
  std::size_t values_for(std::uint64_t first, std::uint64_t last) const;

 private:
  std::vector<row_variable_info> vars_;
  std::uint64_t keys_ = 0;
};

// A model's identity and variables: what a checkpoint must match to be
// restored into it ("mlp" / "784-500-10", the variables' names and shapes).
class model_layout {
 public:
  model_layout() = default;
  // Throws std::invalid_argument naming the variable for a name that is
  // empty, twice or not TensorFlow's (letters, digits, _ . / -), a zero
  // dimension, sizes that overflow (row variables: more than 2^63 rows in
  // all), a regularized row variable (`reg` is theirs), or update settings
  // outside their ranges.
  model_layout(std::string kind, std::string spec, const std::vector<variable_spec>& vars);

  const std::string& kind() const { return kind_; }
  const std::string& spec() const { return spec_; }
  // The dense variables, in the flat buffer in declaration order.
  const std::vector<variable_info>& variables() const { return vars_; }
  std::size_t size() const { return size_; }  // floats of the dense variables
  // The row variables in declaration order, and their key space.
  const std::vector<row_variable_info>& row_variables() const { return rows_.variables(); }
  const row_space& rows() const { return rows_; }
  // By name; throw std::invalid_argument naming the name if the layout has
  // no such variable (of that storage).
  const variable_info& variable(const std::string& name) const;
  const row_variable_info& row_variable(const std::string& name) const;
  std::string to_string() const;  // "mlp 784-500-10"
  // "layer1/weights 784x500,layer1/biases 1x500,...": names and shapes in
  // order; row variables last, as "weights rows 1048576x1".
  std::string variables_text() const;

  // The same kind, spec and variables (names, shapes, regularization), in
  // order; initializers and optimizers are not compared (a checkpoint's
  // slots are checked against the rule where it is restored).
  friend bool operator==(const model_layout& a, const model_layout& b);
  friend bool operator!=(const model_layout& a, const model_layout& b) { return !(a == b); }

 private:
  std::string kind_;
  std::string spec_;
  std::vector<variable_info> vars_;
  std::size_t size_ = 0;
  row_space rows_;
};

// The model's one row variable, or nullptr. Throws std::invalid_argument
// for a layout with several: the parts of the runtime that call it hold one.
const row_variable_info* only_row_variable(const model_layout& layout);

}  // namespace downpour
