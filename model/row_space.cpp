#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "model/layout.hpp"

namespace downpour {
namespace {

// A sparse_table holds at most 2^63 rows (model/sparse_table.hpp), and so
// does the key space of all row variables together.
constexpr std::uint64_t kMaxKeys = std::uint64_t{1} << 63;

}  // namespace

row_space::row_space(std::vector<row_variable_info> vars) : vars_(std::move(vars)) {
  for (auto& v : vars_) {
    if (v.rows > kMaxKeys - keys_)
      throw std::invalid_argument("variable " + v.name + " has " + std::to_string(v.rows) +
                                  " rows, taking the row variables past 2^63 rows in all");
    v.first_key = keys_;
    keys_ += v.rows;
  }
}

std::size_t row_space::variable_of(std::uint64_t key) const {
  if (key >= keys_)
    throw std::out_of_range("key " + std::to_string(key) + " is outside the row variables' " +
                            std::to_string(keys_) + " keys");
  const auto after = std::upper_bound(
      vars_.begin(), vars_.end(), key,
      [](std::uint64_t k, const row_variable_info& v) { return k < v.first_key; });
  return static_cast<std::size_t>(after - vars_.begin()) - 1;
}

std::uint64_t row_space::key_of(std::size_t variable, std::uint64_t row) const {
  if (variable >= vars_.size() || row >= vars_[variable].rows)
    throw std::out_of_range("row " + std::to_string(row) + " of row variable " +
                            std::to_string(variable) + " is outside the row variables");
  return vars_[variable].first_key + row;
}

std::size_t row_space::values_for(const std::vector<std::uint64_t>& keys) const {
  std::size_t total = 0;
  const row_variable_info* in = nullptr;  // the last key's variable: keys mostly ascend
  for (const std::uint64_t key : keys) {
    if (!in || key < in->first_key || key >= in->end_key()) in = &vars_[variable_of(key)];
    if (__builtin_add_overflow(total, in->cols, &total))
      throw std::length_error("the values of " + std::to_string(keys.size()) +
                              " keys overflow a size");
  }
  return total;
}

std::size_t row_space::values_for(std::uint64_t first, std::uint64_t last) const {
  if (first > last || last > keys_)
    throw std::out_of_range("keys [" + std::to_string(first) + ", " + std::to_string(last) +
                            ") are outside the row variables' " + std::to_string(keys_) + " keys");
  std::size_t total = 0;
  for (const auto& v : vars_) {
    const std::uint64_t lo = std::max(first, v.first_key);
    const std::uint64_t hi = std::min(last, v.end_key());
    std::size_t n = 0;
    if (lo >= hi) continue;
    if (__builtin_mul_overflow(hi - lo, v.cols, &n) || __builtin_add_overflow(total, n, &total))
      throw std::length_error("the values of keys [" + std::to_string(first) + ", " +
                              std::to_string(last) + ") overflow a size");
  }
  return total;
}

}  // namespace downpour
