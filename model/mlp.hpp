// Forward/backward of the MLP on a batch. Eigen stays behind this header.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "data/batcher.hpp"
#include "data/idx.hpp"
#include "model/shape.hpp"

namespace downpour {

// Buffers for one batch size, allocated once: a training step allocates nothing.
class mlp_workspace {
 public:
  mlp_workspace(const model_shape& shape, std::size_t batch_size, float l2);
  ~mlp_workspace();
  mlp_workspace(mlp_workspace&&) noexcept;
  mlp_workspace& operator=(mlp_workspace&&) noexcept;

  // Loss (mean softmax cross-entropy + l2 * sum(w^2)/2 over the weights) of the
  // batch at params; writes d(loss)/d(params) into grad (shape.size() floats).
  float loss_and_gradient(const float* params, const batch& b, float* grad);

  // Mean softmax cross-entropy plus the L2 term, without the gradient.
  float loss(const float* params, const batch& b);

  const model_shape& shape() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

// Per-class and overall accuracy of params on a data set.
struct accuracy_report {
  double overall = 0.0;
  std::vector<double> per_class;  // NaN-free: a class with no examples reads 0
};

accuracy_report evaluate(const model_shape& shape, const float* params, const image_set& set);

}  // namespace downpour
