// DLRM's dot interaction (Naumov et al. 2019; interact_features in
// facebookresearch/dlrm's dlrm_s_pytorch.py, arch_interaction_op "dot"):
// features vectors of one width per example (the bottom MLP's output, then
// one embedding per categorical field) -> the dot product of every pair,
// (1,0), (2,0), (2,1), (3,0), ...: DLRM's order, row i of the Gram matrix
// below its diagonal. DLRM then puts the first vector in front of them.
#pragma once

#include <cstddef>
#include <vector>

#include "model/layers/layer.hpp"
#include "model/layers/tensor.hpp"

namespace downpour::layers {

enum class interaction_output { pairs, first_then_pairs };

template <class T>
class dot_interaction final : public join<T> {
 public:
  // Throws std::invalid_argument for fewer than 2 features or a width of 0.
  dot_interaction(std::size_t features, std::size_t width, interaction_output what);
  const char* kind() const override { return "dot_interaction"; }
  const std::vector<std::size_t>& input_widths() const override { return widths_; }
  // features * (features - 1) / 2, plus width with first_then_pairs.
  std::size_t output_width() const override { return output_.width(); }
  void reserve(std::size_t max_batch) override;
  const_tensor<T> forward(const std::vector<const_tensor<T>>& in) override;
  const std::vector<const_tensor<T>>& backward(const_tensor<T> dout) override;

 private:
  std::size_t features_, width_;
  interaction_output what_;
  std::vector<std::size_t> widths_;
  std::size_t rows_ = 0;
  batch_buffer<T> stacked_;  // per example its features x width vectors, for backward
  batch_buffer<T> output_;
  std::vector<T> gram_, pair_gradient_, stacked_gradient_;  // one example's, reused
  std::vector<batch_buffer<T>> input_gradients_;
  std::vector<tensor<T>> writable_;  // the same views as input_gradient_views_
  std::vector<const_tensor<T>> input_gradient_views_;
};

extern template class dot_interaction<float>;
extern template class dot_interaction<double>;

}  // namespace downpour::layers
