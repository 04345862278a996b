#include "model/torch/torch_lookups.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "model/sparse_models.hpp"

namespace downpour {
namespace {

torch::Tensor float_view(const float* data, std::int64_t rows, std::int64_t cols) {
  // Read-only use: autograd writes the rows' gradient elsewhere.
  return torch::from_blob(const_cast<float*>(data), {rows, cols}, torch::kFloat32);
}

torch::Tensor index_view(std::vector<std::int64_t>& v) {
  return torch::from_blob(v.data(), {static_cast<std::int64_t>(v.size())}, torch::kInt64);
}

}  // namespace

torch_lookups::table::table(const torch_row_variable& v, std::uint64_t first, std::uint64_t seed)
    : var(v), first_key(first), hashing(v.rows, seed), gathered(hashing) {}

void torch_lookups::table::select(const batch& b) {
  selected.offsets.assign(1, 0);
  selected.keys.clear();
  selected.values.clear();
  for (std::size_t i = 0; i < b.size; ++i) {
    for (std::uint64_t j = b.offsets[i]; j < b.offsets[i + 1]; ++j) {
      if (b.keys[j] < var.first_feature || b.keys[j] >= var.end_feature) continue;
      selected.keys.push_back(b.keys[j]);
      selected.values.push_back(b.values[j]);
    }
    selected.offsets.push_back(selected.keys.size());
  }
  selected.labels.resize(b.size);  // gather reads the examples' count from them
}

// Each variable hashes with a seed of its own: two variables of one size do
// not put the same features together.
torch_lookups::torch_lookups(const std::vector<torch_row_variable>& vars,
                             const model_layout& layout) {
  const auto& declared = layout.row_variables();
  if (declared.size() != vars.size())
    throw std::logic_error("torch model: " + std::to_string(vars.size()) +
                           " row variables, the layout has " + std::to_string(declared.size()));
  tables_.reserve(vars.size());
  for (std::size_t t = 0; t < vars.size(); ++t)
    tables_.emplace_back(vars[t], declared[t].first_key, kFeatureHashSeed + t);
  lookups_.resize(vars.size());
}

const std::vector<std::uint64_t>& torch_lookups::gather(const batch& b) {
  if (b.offsets.size() < b.size + 1)
    throw std::invalid_argument(
        "torch model: a batch without sparse features (a row variable needs "
        "--data-format=libsvm)");
  keys_.clear();
  values_ = 0;
  for (table& t : tables_) {
    t.select(b);
    const std::vector<std::uint64_t>& rows = t.gathered.gather(t.selected, 0, b.size);
    for (std::uint64_t row : rows) keys_.push_back(t.first_key + row);
    t.first_value = values_;
    values_ += rows.size() * t.var.cols;
    const std::vector<std::uint32_t>& slots = t.gathered.slots();
    t.slots.assign(slots.begin(), slots.end());
    t.offsets.assign(t.selected.offsets.begin(), t.selected.offsets.end() - 1);
  }
  return keys_;
}

const std::vector<torch_lookup>& torch_lookups::lookups(const float* rows) {
  for (std::size_t i = 0; i < tables_.size(); ++i) {
    table& t = tables_[i];
    torch_lookup& out = lookups_[i];
    const auto touched = static_cast<std::int64_t>(t.gathered.keys().size());
    out.rows = float_view(rows + t.first_value, touched, static_cast<std::int64_t>(t.var.cols));
    out.slots = index_view(t.slots);
    out.offsets = index_view(t.offsets);
    out.values = torch::from_blob(t.selected.values.data(),
                                  {static_cast<std::int64_t>(t.selected.values.size())},
                                  torch::kFloat32);
  }
  return lookups_;
}

const std::vector<torch_lookup>& torch_lookups::lookups_with_gradient(const float* rows,
                                                                      float* row_grad) {
  std::fill(row_grad, row_grad + values_, 0.0f);
  lookups(rows);
  for (std::size_t i = 0; i < tables_.size(); ++i) {
    torch::Tensor& r = lookups_[i].rows;
    r.requires_grad_(true);
    // autograd accumulates into a defined gradient in place: straight into
    // the rows the worker pushes.
    r.mutable_grad() = torch::from_blob(row_grad + tables_[i].first_value, r.sizes(),
                                        torch::kFloat32);
  }
  return lookups_;
}

}  // namespace downpour
