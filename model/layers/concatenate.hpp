// Inputs side by side: example e's output is its row of the first input,
// then of the second, ... (tf.concat along axis 1).
#pragma once

#include <cstddef>
#include <vector>

#include "model/layers/layer.hpp"
#include "model/layers/tensor.hpp"

namespace downpour::layers {

template <class T>
class concatenate final : public join<T> {
 public:
  // Throws std::invalid_argument for fewer than 2 inputs or a width of 0.
  explicit concatenate(std::vector<std::size_t> widths);
  const char* kind() const override { return "concatenate"; }
  const std::vector<std::size_t>& input_widths() const override { return widths_; }
  std::size_t output_width() const override { return output_.width(); }
  void reserve(std::size_t max_batch) override;
  const_tensor<T> forward(const std::vector<const_tensor<T>>& in) override;
  // Each input's columns of dout, copied out (a view of them would not be
  // row-major with rows of its own width).
  const std::vector<const_tensor<T>>& backward(const_tensor<T> dout) override;

 private:
  std::vector<std::size_t> widths_;
  std::size_t rows_ = 0;
  batch_buffer<T> output_;
  std::vector<batch_buffer<T>> input_gradients_;
  std::vector<const_tensor<T>> input_gradient_views_;
};

extern template class concatenate<float>;
extern template class concatenate<double>;

}  // namespace downpour::layers
