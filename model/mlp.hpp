// The MLP: input -> hidden layers (ReLU) -> classes (logits), softmax
// cross-entropy loss with L2 on the weights; with no hidden layer it is
// softmax regression. Eigen stays behind this header.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "data/batcher.hpp"
#include "model/mlp_spec.hpp"
#include "model/model.hpp"

namespace downpour {

// Buffers for one batch size, allocated once: a training step allocates
// nothing. Training runs in float; the same code in double checks the
// gradient against finite differences tightly (test_model). The layers do
// the calculus (model/layers); the L2 term is added here.
template <class Scalar>
class basic_mlp_workspace {
 public:
  basic_mlp_workspace(const mlp_spec& spec, std::size_t batch_size, Scalar l2);
  ~basic_mlp_workspace();
  basic_mlp_workspace(basic_mlp_workspace&&) noexcept;
  basic_mlp_workspace& operator=(basic_mlp_workspace&&) noexcept;

  // Loss (mean softmax cross-entropy + l2 * sum(w^2)/2 over the weights) of the
  // batch at params; writes d(loss)/d(params) into grad (every float of the
  // layout).
  Scalar loss_and_gradient(const Scalar* params, const batch& b, Scalar* grad);

  // Mean softmax cross-entropy plus the L2 term, without the gradient.
  Scalar loss(const Scalar* params, const batch& b);

  // The logits of the batch (b.size x classes, row-major), valid until the next call.
  const Scalar* scores(const Scalar* params, const batch& b);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

extern template class basic_mlp_workspace<float>;
extern template class basic_mlp_workspace<double>;

using mlp_workspace = basic_mlp_workspace<float>;

// The model of kind ("mlp" or "softmax") for spec.
class mlp_model final : public model {
 public:
  mlp_model(std::string kind, mlp_spec spec, float l2);
  model_layout layout() const override { return layout_; }
  std::size_t classes() const override { return spec_.classes; }
  std::unique_ptr<model_workspace> workspace(std::size_t batch_size) const override;
  const mlp_spec& spec() const { return spec_; }

 private:
  mlp_spec spec_;
  float l2_;
  model_layout layout_;
};

// --model mlp: hidden layers of these sizes (at least one) on the request's data.
std::shared_ptr<const model> make_mlp(const std::vector<std::size_t>& hidden,
                                      const model_request& request);

// --model softmax: softmax regression (layer1/weights and layer1/biases).
std::shared_ptr<const model> make_softmax(const model_request& request);

}  // namespace downpour
