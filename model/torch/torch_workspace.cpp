// The module's parameters and gradients are views over the worker's buffers,
// rebound only when the worker hands over another buffer: a step copies no
// parameters and allocates no gradient buffers (autograd accumulates into
// the views in place). LibTorch still allocates the activations of each
// forward pass and the small tensor headers of the batch's inputs.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "model/sparse_models.hpp"
#include "model/torch/torch_workspace.hpp"

namespace downpour {
namespace {

std::vector<std::int64_t> shape_of(const torch::Tensor& t) { return t.sizes().vec(); }

torch::Tensor view_of(const float* data, const std::vector<std::int64_t>& shape) {
  // Read-only use: the module never writes its parameters (no optimizer).
  return torch::from_blob(const_cast<float*>(data), shape, torch::kFloat32);
}

}  // namespace

torch_workspace::torch_workspace(const torch_model_spec& spec, const model_layout& layout)
    : spec_(spec), layout_(layout), net_(spec.make()),
      hashing_(spec.rows ? spec.rows->rows : 1, kFeatureHashSeed), gathered_(hashing_) {
  for (const auto& named : net_.module->named_parameters(true)) parameters_.push_back(named.value());
  if (parameters_.size() != layout_.variables().size())
    throw std::invalid_argument("torch model: make() returned a module of " +
                                std::to_string(parameters_.size()) + " parameters, the layout has " +
                                std::to_string(layout_.variables().size()));
}

void torch_workspace::bind_parameters(const float* params) {
  if (params == bound_params_) return;
  torch::NoGradGuard no_grad;
  for (std::size_t i = 0; i < parameters_.size(); ++i)
    parameters_[i].set_data(view_of(params + layout_.variables()[i].offset, shape_of(parameters_[i])));
  bound_params_ = params;
}

void torch_workspace::bind_gradients(float* grad) {
  if (grad == bound_grad_) return;
  for (std::size_t i = 0; i < parameters_.size(); ++i)
    parameters_[i].mutable_grad() =
        view_of(grad + layout_.variables()[i].offset, shape_of(parameters_[i]));
  bound_grad_ = grad;
}

void torch_workspace::gather(const batch& b) {
  if (b.offsets.size() < b.size + 1)
    throw std::invalid_argument(
        "torch model: a batch without sparse features (a row variable needs "
        "--data-format=libsvm)");
  csr_.offsets = b.offsets;  // assignments reuse the buffers once grown
  csr_.keys = b.keys;
  csr_.values = b.values;
  csr_.labels.resize(b.size);
  gathered_.gather(csr_, 0, b.size);
  const std::vector<std::uint32_t>& slots = gathered_.slots();
  slots_.assign(slots.begin(), slots.end());
  offsets_.assign(b.offsets.begin(), b.offsets.begin() + static_cast<std::ptrdiff_t>(b.size));
}

torch_batch torch_workspace::inputs(const batch& b, const float* rows) {
  torch_batch in;
  const auto n = static_cast<std::int64_t>(b.size);
  labels_.assign(b.y.begin(), b.y.begin() + n);
  in.labels = torch::from_blob(labels_.data(), {n}, torch::kInt64);
  if (!rows) {
    in.x = view_of(b.x.data(), {n, static_cast<std::int64_t>(b.input_size)});
    return in;
  }
  const auto keys = static_cast<std::int64_t>(gathered_.keys().size());
  const auto cols = static_cast<std::int64_t>(spec_.rows->cols);
  in.rows = view_of(rows, {keys, cols});
  in.slots = torch::from_blob(slots_.data(), {static_cast<std::int64_t>(slots_.size())},
                              torch::kInt64);
  in.offsets = torch::from_blob(offsets_.data(), {n}, torch::kInt64);
  in.values = view_of(csr_.values.data(), {static_cast<std::int64_t>(slots_.size())});
  return in;
}

// Runs autograd into the bound gradients, then adds TensorFlow's L2 term
// l2 * sum(w^2) / 2 of the regularized variables and its gradient l2 * w.
float torch_workspace::backward_and_l2(torch::Tensor loss, const float* params, float* grad) {
  std::fill(grad, grad + layout_.size(), 0.0f);
  loss.backward();
  float total = loss.item<float>();
  float squares = 0.0f;
  for (const variable_info& v : layout_.variables()) {
    if (!v.regularized) continue;
    for (std::size_t i = v.offset; i < v.offset + v.size(); ++i) {
      squares += params[i] * params[i];
      grad[i] += spec_.l2 * params[i];
    }
  }
  return total + 0.5f * spec_.l2 * squares;
}

const float* torch_workspace::keep_scores(torch::Tensor scores) {
  scores_ = scores.contiguous();
  return scores_.data_ptr<float>();
}

void torch_workspace::require_rows(bool with_rows) const {
  if (with_rows != spec_.rows.has_value())
    throw std::logic_error(spec_.rows ? "torch model: a batch's loss and scores need its rows"
                                      : "torch model: rows given to a model without a row variable");
}

float torch_workspace::loss_and_gradient(const float* params, const batch& b, float* grad) {
  require_rows(false);
  bind_parameters(params);
  bind_gradients(grad);
  const torch_batch in = inputs(b, nullptr);
  return backward_and_l2(spec_.loss(net_.forward(in), in.labels), params, grad);
}

float torch_workspace::loss(const float* params, const batch& b) {
  require_rows(false);
  bind_parameters(params);
  torch::NoGradGuard no_grad;
  const torch_batch in = inputs(b, nullptr);
  float total = spec_.loss(net_.forward(in), in.labels).item<float>();
  float squares = 0.0f;
  for (const variable_info& v : layout_.variables())
    if (v.regularized)
      for (std::size_t i = v.offset; i < v.offset + v.size(); ++i) squares += params[i] * params[i];
  return total + 0.5f * spec_.l2 * squares;
}

const float* torch_workspace::scores(const float* params, const batch& b) {
  require_rows(false);
  bind_parameters(params);
  torch::NoGradGuard no_grad;
  return keep_scores(net_.forward(inputs(b, nullptr)));
}

const std::vector<std::uint64_t>& torch_workspace::touched_rows(const batch& b) {
  if (!spec_.rows) return model_workspace::touched_rows(b);
  gather(b);
  return gathered_.keys();
}

float torch_workspace::loss_and_gradient(const float* params, const float* rows, const batch& b,
                                         float* grad, float* row_grad) {
  if (!spec_.rows) return loss_and_gradient(params, b, grad);
  bind_parameters(params);
  bind_gradients(grad);
  gather(b);
  torch_batch in = inputs(b, rows);
  in.rows.requires_grad_(true);
  const std::size_t row_floats = gathered_.keys().size() * spec_.rows->cols;
  std::fill(row_grad, row_grad + row_floats, 0.0f);
  in.rows.mutable_grad() = view_of(row_grad, shape_of(in.rows));
  torch::Tensor loss = spec_.loss(net_.forward(in), in.labels);
  return backward_and_l2(loss, params, grad);
}

const float* torch_workspace::scores(const float* params, const float* rows, const batch& b) {
  if (!spec_.rows) return scores(params, b);
  bind_parameters(params);
  gather(b);
  torch::NoGradGuard no_grad;
  return keep_scores(net_.forward(inputs(b, rows)));
}

}  // namespace downpour
