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

void check_variable(const variable_spec& v, const std::vector<variable_info>& before,
                    const std::string& model) {
  if (!valid_name(v.name))
    throw std::invalid_argument(model + ": variable name '" + v.name +
                                "' is not valid (expected letters, digits and _ . / -)");
  if (v.rows == 0 || v.cols == 0)
    throw std::invalid_argument(model + ": variable " + v.name + " has a zero dimension [" +
                                std::to_string(v.rows) + ", " + std::to_string(v.cols) + "]");
  auto same = [&](const variable_info& x) { return x.name == v.name; };
  if (std::any_of(before.begin(), before.end(), same))
    throw std::invalid_argument(model + ": variable " + v.name + " is declared twice");
}

}  // namespace

model_layout::model_layout(std::string kind, std::string spec,
                           const std::vector<variable_spec>& vars)
    : kind_(std::move(kind)), spec_(std::move(spec)) {
  const std::string model = to_string();
  for (const auto& v : vars) {
    check_variable(v, vars_, model);
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
  return text;
}

// Offsets follow from the names and shapes in order; how a variable started
// does not make another model.
bool operator==(const model_layout& a, const model_layout& b) {
  return a.kind_ == b.kind_ && a.spec_ == b.spec_ &&
         std::equal(a.vars_.begin(), a.vars_.end(), b.vars_.begin(), b.vars_.end(),
                    [](const variable_info& x, const variable_info& y) {
                      return x.name == y.name && x.rows == y.rows && x.cols == y.cols &&
                             x.regularized == y.regularized;
                    });
}

}  // namespace downpour
