#include "model/layout.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <utility>

namespace downpour {
namespace {

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
  const auto refuse = [&](const std::string& why) {
    throw std::invalid_argument(model + ": variable " + v.name + " " + why);
  };
  if (!valid_name(v.name))
    throw std::invalid_argument(model + ": variable name '" + v.name +
                                "' is not valid (expected letters, digits and _ . / -)");
  if (v.rows == 0 || v.cols == 0)
    refuse("has a zero dimension [" + std::to_string(v.rows) + ", " + std::to_string(v.cols) +
           "]");
  if (std::find(before.begin(), before.end(), v.name) != before.end()) refuse("is declared twice");
  if (const std::string why = update_spec_problem(v.update); !why.empty())
    refuse(std::string("(") + to_string(v.update.rule) + ") has " + why);
  if (const std::string why = regularizer_problem(v.reg); !why.empty())
    refuse("has regularizer " + why);
  if (v.regularized && v.store == storage::rows)
    refuse("is stored as rows and cannot be regularized (its regularizer `reg` is)");
  if (v.regularized && (v.reg.l1 > 0.0f || v.reg.l2 > 0.0f))
    refuse("is both regularized (the job's --l2) and has its own regularizer");
}

row_space rows_of(std::vector<row_variable_info> rows, const std::string& model) {
  try {
    return row_space(std::move(rows));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(model + ": " + e.what());
  }
}

}  // namespace

model_layout::model_layout(std::string kind, std::string spec,
                           const std::vector<variable_spec>& vars)
    : kind_(std::move(kind)), spec_(std::move(spec)) {
  const std::string model = to_string();
  std::vector<std::string> names;
  std::vector<row_variable_info> rows;
  for (const auto& v : vars) {
    check_variable(v, names, model);
    names.push_back(v.name);
    if (v.store == storage::rows) {
      rows.push_back({v.name, v.rows, v.cols, v.init, v.update, v.reg});
      continue;
    }
    std::size_t n = 0;
    if (__builtin_mul_overflow(v.rows, v.cols, &n) || __builtin_add_overflow(size_, n, &n))
      throw std::invalid_argument(model + ": variable " + v.name + " makes the model too large");
    vars_.push_back({v.name, size_, v.rows, v.cols, v.regularized, v.init, v.update, v.reg});
    size_ = n;
  }
  rows_ = rows_of(std::move(rows), model);
}

const variable_info& model_layout::variable(const std::string& name) const {
  for (const auto& v : vars_)
    if (v.name == name) return v;
  for (const auto& v : rows_.variables())
    if (v.name == name)
      throw std::invalid_argument(to_string() + ": variable " + name +
                                  " is a row variable (see row_variable)");
  throw std::invalid_argument(to_string() + ": no variable named '" + name + "'");
}

const row_variable_info& model_layout::row_variable(const std::string& name) const {
  for (const auto& v : rows_.variables())
    if (v.name == name) return v;
  for (const auto& v : vars_)
    if (v.name == name)
      throw std::invalid_argument(to_string() + ": variable " + name +
                                  " is dense, not a row variable");
  throw std::invalid_argument(to_string() + ": no row variable named '" + name + "'");
}

std::string model_layout::to_string() const {
  return spec_.empty() ? kind_ : kind_ + " " + spec_;
}

std::string model_layout::variables_text() const {
  std::string text;
  for (const auto& v : vars_)
    text += (text.empty() ? "" : ",") + v.name + " " + std::to_string(v.rows) + "x" +
            std::to_string(v.cols);
  for (const auto& v : rows_.variables())
    text += (text.empty() ? "" : ",") + v.name + " rows " + std::to_string(v.rows) + "x" +
            std::to_string(v.cols);
  return text;
}

const row_variable_info* only_row_variable(const model_layout& layout) {
  const auto& rows = layout.row_variables();
  if (rows.size() > 1)
    throw std::invalid_argument(layout.to_string() + ": " + std::to_string(rows.size()) +
                                " row variables (this part of the runtime holds one)");
  return rows.empty() ? nullptr : &rows.front();
}

// Offsets and first keys follow from the names and shapes in order; how a
// variable starts or is updated does not make another model.
bool operator==(const model_layout& a, const model_layout& b) {
  const auto& ra = a.row_variables();
  const auto& rb = b.row_variables();
  return a.kind_ == b.kind_ && a.spec_ == b.spec_ &&
         std::equal(ra.begin(), ra.end(), rb.begin(), rb.end(),
                    [](const row_variable_info& x, const row_variable_info& y) {
                      return x.name == y.name && x.rows == y.rows && x.cols == y.cols;
                    }) &&
         std::equal(a.vars_.begin(), a.vars_.end(), b.vars_.begin(), b.vars_.end(),
                    [](const variable_info& x, const variable_info& y) {
                      return x.name == y.name && x.rows == y.rows && x.cols == y.cols &&
                             x.regularized == y.regularized;
                    });
}

}  // namespace downpour
