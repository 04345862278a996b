// The module's parameters and gradients are views over the worker's buffers,
// rebound only when the worker hands over another buffer: a step copies no
// parameters and allocates no gradient buffers (autograd accumulates into
// the views in place). LibTorch still allocates the activations of each
// forward pass and the small tensor headers of the batch's inputs.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "model/torch/torch_workspace.hpp"

namespace downpour {
namespace {

std::vector<std::int64_t> shape_of(const torch::Tensor& t) { return t.sizes().vec(); }

torch::Tensor view_of(const float* data, const std::vector<std::int64_t>& shape) {
  // Read-only use: the module never writes its parameters (no optimizer).
  return torch::from_blob(const_cast<float*>(data), shape, torch::kFloat32);
}

// sum(w^2) in 8 independent partial sums: one running sum is a chain of
// dependent adds the compiler may not reorder (without -ffast-math), and was
// most of the adapter's own time in an MLP step (perf of bench_torch); these
// vectorize.
float sum_of_squares(const float* w, std::size_t n) {
  float lanes[8] = {};
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (std::size_t k = 0; k < 8; ++k) lanes[k] += w[i + k] * w[i + k];
  for (; i < n; ++i) lanes[0] += w[i] * w[i];
  float total = 0.0f;
  for (float lane : lanes) total += lane;
  return total;
}

}  // namespace

torch_workspace::torch_workspace(const torch_model_spec& spec, const model_layout& layout)
    : spec_(spec), layout_(layout), net_(spec.make()), lookups_(spec.row_variables, layout) {
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

// The batch's labels and dense features; the lookups are set by the caller.
const torch_batch& torch_workspace::inputs(const batch& b) {
  const auto n = static_cast<std::int64_t>(b.size);
  labels_.assign(b.y.begin(), b.y.begin() + n);
  batch_.labels = torch::from_blob(labels_.data(), {n}, torch::kInt64);
  if (lookups_.empty()) batch_.x = view_of(b.x.data(), {n, static_cast<std::int64_t>(b.input_size)});
  return batch_;
}

// TensorFlow's L2 term of the regularized variables: l2 * sum(w^2) / 2.
float torch_workspace::l2_term(const float* params) const {
  float squares = 0.0f;
  for (const variable_info& v : layout_.variables())
    if (v.regularized) squares += sum_of_squares(params + v.offset, v.size());
  return 0.5f * spec_.l2 * squares;
}

// Runs autograd into the bound gradients, then adds the L2 term's gradient l2 * w.
float torch_workspace::backward_and_l2(torch::Tensor loss, const float* params, float* grad) {
  std::fill(grad, grad + layout_.size(), 0.0f);
  loss.backward();
  for (const variable_info& v : layout_.variables())
    if (v.regularized)
      for (std::size_t i = v.offset; i < v.offset + v.size(); ++i) grad[i] += spec_.l2 * params[i];
  return loss.item<float>() + l2_term(params);
}

const float* torch_workspace::keep_scores(torch::Tensor scores) {
  scores_ = scores.contiguous();
  return scores_.data_ptr<float>();
}

void torch_workspace::refuse_without_rows() const {
  if (!lookups_.empty())
    throw std::logic_error("torch model: a batch's loss and scores need its rows");
}

float torch_workspace::loss_and_gradient(const float* params, const batch& b, float* grad) {
  refuse_without_rows();
  bind_parameters(params);
  bind_gradients(grad);
  const torch_batch& in = inputs(b);
  return backward_and_l2(spec_.loss(net_.forward(in), in.labels), params, grad);
}

float torch_workspace::loss(const float* params, const batch& b) {
  refuse_without_rows();
  bind_parameters(params);
  torch::NoGradGuard no_grad;
  const torch_batch& in = inputs(b);
  return spec_.loss(net_.forward(in), in.labels).item<float>() + l2_term(params);
}

const float* torch_workspace::scores(const float* params, const batch& b) {
  refuse_without_rows();
  bind_parameters(params);
  torch::NoGradGuard no_grad;
  return keep_scores(net_.forward(inputs(b)));
}

const std::vector<std::uint64_t>& torch_workspace::touched_rows(const batch& b) {
  if (lookups_.empty()) return model_workspace::touched_rows(b);
  return lookups_.gather(b);
}

float torch_workspace::loss_and_gradient(const float* params, const float* rows, const batch& b,
                                         float* grad, float* row_grad) {
  if (lookups_.empty()) return loss_and_gradient(params, b, grad);
  bind_parameters(params);
  bind_gradients(grad);
  lookups_.gather(b);
  batch_.lookups = lookups_.lookups_with_gradient(rows, row_grad);
  const torch_batch& in = inputs(b);
  return backward_and_l2(spec_.loss(net_.forward(in), in.labels), params, grad);
}

const float* torch_workspace::scores(const float* params, const float* rows, const batch& b) {
  if (lookups_.empty()) return scores(params, b);
  bind_parameters(params);
  lookups_.gather(b);
  torch::NoGradGuard no_grad;
  batch_.lookups = lookups_.lookups(rows);
  return keep_scores(net_.forward(inputs(b)));
}

}  // namespace downpour
