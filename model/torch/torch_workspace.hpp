// One worker's module bound to Downpour's buffers (model/torch/torch_model.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "model/sparse_logreg.hpp"
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
  torch_batch inputs(const batch& b, const float* rows);
  void gather(const batch& b);
  float backward_and_l2(torch::Tensor loss, const float* params, float* grad);
  const float* keep_scores(torch::Tensor scores);
  void require_rows(bool with_rows) const;

  torch_model_spec spec_;
  model_layout layout_;
  torch_network net_;
  std::vector<torch::Tensor> parameters_;  // in layout order
  const float* bound_params_ = nullptr;    // what parameters_ view
  float* bound_grad_ = nullptr;            // what their gradients view
  std::vector<std::int64_t> labels_;
  torch::Tensor scores_;
  // The row variable's batch: features hashed into rows, as embedding_bag indices.
  sparse_logreg hashing_;
  logreg_batch gathered_;
  sparse_examples csr_;
  std::vector<std::int64_t> slots_;
  std::vector<std::int64_t> offsets_;
};

}  // namespace downpour
