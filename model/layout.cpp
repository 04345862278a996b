#include "model/layout.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <utility>

namespace downpour {
namespace {

// A sparse_table holds at most 2^63 rows (model/sparse_table.hpp).
constexpr std::uint64_t max_rows = std::uint64_t{1} << 63;

// TensorFlow's own rule for names: the fingerprint, the checkpoint and the
// .npz carry them as they are.
bool valid_name(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/' ||
           c == '-';
  });
}

void check_variable(const variable_spec& v, const std::vector<std::string>& before,
                    const std::string& model) {
  if (!valid_name(v.name))
    throw std::invalid_argument(model + ": variable name '" + v.name +
                                "' is not valid (expected letters, digits and _ . / -)");
  if (v.rows == 0 || v.cols == 0)
    throw std::invalid_argument(model + ": variable " + v.name + " has a zero dimension [" +
                                std::to_string(v.rows) + ", " + std::to_string(v.cols) + "]");
  if (std::find(before.begin(), before.end(), v.name) != before.end())
    throw std::invalid_argument(model + ": variable " + v.name + " is declared twice");
}

// The checks only a rows variable has: one per model, no L2 (a worker never
// sees the whole variable, so it cannot add its norm to the loss).
row_variable_info row_variable_of(const variable_spec& v,
                                  const std::optional<row_variable_info>& before,
                                  const std::string& model) {
  if (before)
    throw std::invalid_argument(model + ": variable " + v.name + " is a second rows variable (" +
                                before->name + " is the model's one)");
  if (v.regularized)
    throw std::invalid_argument(model + ": variable " + v.name +
                                " is stored as rows and cannot be regularized (L2 is for dense "
                                "variables)");
  if (v.rows > max_rows)
    throw std::invalid_argument(model + ": variable " + v.name + " has " + std::to_string(v.rows) +
                                " rows (at most 2^63)");
  return {v.name, v.rows, v.cols, v.init};
}

}  // namespace

model_layout::model_layout(std::string kind, std::string spec,
                           const std::vector<variable_spec>& vars)
    : kind_(std::move(kind)), spec_(std::move(spec)) {
  const std::string model = to_string();
  std::vector<std::string> names;
  for (const auto& v : vars) {
    check_variable(v, names, model);
    names.push_back(v.name);
    if (v.store == storage::rows) {
      rows_ = row_variable_of(v, rows_, model);
      continue;
    }
    std::size_t n = 0;
    if (__builtin_mul_overflow(v.rows, v.cols, &n) || __builtin_add_overflow(size_, n, &n))
      throw std::invalid_argument(model + ": variable " + v.name + " makes the model too large");
    vars_.push_back({v.name, size_, v.rows, v.cols, v.regularized, v.init});
    size_ = n;
  }
}

std::string model_layout::to_string() const {
  return spec_.empty() ? kind_ : kind_ + " " + spec_;
}

std::string model_layout::variables_text() const {
  std::string text;
  for (const auto& v : vars_)
    text += (text.empty() ? "" : ",") + v.name + " " + std::to_string(v.rows) + "x" +
            std::to_string(v.cols);
  if (rows_)
    text += (text.empty() ? "" : ",") + rows_->name + " rows " + std::to_string(rows_->rows) + "x" +
            std::to_string(rows_->cols);
  return text;
}

// Offsets follow from the names and shapes in order; how a variable started
// does not make another model.
bool operator==(const model_layout& a, const model_layout& b) {
  const auto same_rows = [](const row_variable_info& x, const row_variable_info& y) {
    return x.name == y.name && x.rows == y.rows && x.cols == y.cols;
  };
  const bool rows_equal =
      a.rows_.has_value() == b.rows_.has_value() && (!a.rows_ || same_rows(*a.rows_, *b.rows_));
  return a.kind_ == b.kind_ && a.spec_ == b.spec_ && rows_equal &&
         std::equal(a.vars_.begin(), a.vars_.end(), b.vars_.begin(), b.vars_.end(),
                    [](const variable_info& x, const variable_info& y) {
                      return x.name == y.name && x.rows == y.rows && x.cols == y.cols &&
                             x.regularized == y.regularized;
                    });
}

}  // namespace downpour
