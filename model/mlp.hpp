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
// Training runs in float; the same code in double checks the gradient
// against finite differences tightly (test_model).
template <class Scalar>
class basic_mlp_workspace {
 public:
  basic_mlp_workspace(const model_shape& shape, std::size_t batch_size, Scalar l2);
  ~basic_mlp_workspace();
  basic_mlp_workspace(basic_mlp_workspace&&) noexcept;
  basic_mlp_workspace& operator=(basic_mlp_workspace&&) noexcept;

  // Loss (mean softmax cross-entropy + l2 * sum(w^2)/2 over the weights) of the
  // batch at params; writes d(loss)/d(params) into grad (shape.size() values).
  Scalar loss_and_gradient(const Scalar* params, const batch& b, Scalar* grad);

  // Mean softmax cross-entropy plus the L2 term, without the gradient.
  Scalar loss(const Scalar* params, const batch& b);

  const model_shape& shape() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

extern template class basic_mlp_workspace<float>;
extern template class basic_mlp_workspace<double>;

using mlp_workspace = basic_mlp_workspace<float>;

// Per-class and overall accuracy of params on a data set.
struct accuracy_report {
  double overall = 0.0;
  std::vector<double> per_class;  // NaN-free: a class with no examples reads 0
};

accuracy_report evaluate(const model_shape& shape, const float* params, const image_set& set);

}  // namespace downpour
