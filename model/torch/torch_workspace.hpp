// One worker's module bound to Downpour's buffers (model/torch/torch_model.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "model/torch/torch_lookups.hpp"
#include "model/torch/torch_model.hpp"

namespace downpour {

class torch_workspace final : public model_workspace {
 public:
  torch_workspace(const torch_model_spec& spec, const model_layout& layout);

  float loss_and_gradient(const float* params, const batch& b, float* grad) override;
  float loss(const float* params, const batch& b) override;
  const float* scores(const float* params, const batch& b) override;

  const std::vector<std::uint64_t>& touched_rows(const batch& b) override;
  float loss_and_gradient(const float* params, const float* rows, const batch& b, float* grad,
                          float* row_grad) override;
  const float* scores(const float* params, const float* rows, const batch& b) override;

 private:
  void bind_parameters(const float* params);
  void bind_gradients(float* grad);
  const torch_batch& inputs(const batch& b);
  float backward_and_l2(torch::Tensor loss, const float* params, float* grad);
  float l2_term(const float* params) const;
  const float* keep_scores(torch::Tensor scores);
  void refuse_without_rows() const;

  torch_model_spec spec_;
  model_layout layout_;
  torch_network net_;
  std::vector<torch::Tensor> parameters_;  // in layout order
  const float* bound_params_ = nullptr;    // what parameters_ view
  float* bound_grad_ = nullptr;            // what their gradients view
  std::vector<std::int64_t> labels_;
  torch_batch batch_;  // reused: its lookups' storage stays
  torch::Tensor scores_;
  torch_lookups lookups_;
};

}  // namespace downpour
