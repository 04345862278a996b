// Inputs of one width added: example e's output is the sum of its rows of
// every input (tf.add_n; Wide & Deep sums its linear and deep logits).
#pragma once

#include <cstddef>
#include <vector>

#include "model/layers/layer.hpp"
#include "model/layers/tensor.hpp"

namespace downpour::layers {

template <class T>
class elementwise_sum final : public join<T> {
 public:
  // Throws std::invalid_argument for fewer than 2 inputs or a width of 0.
  elementwise_sum(std::size_t inputs, std::size_t width);
  const char* kind() const override { return "elementwise_sum"; }
  const std::vector<std::size_t>& input_widths() const override { return widths_; }
  std::size_t output_width() const override { return output_.width(); }
  void reserve(std::size_t max_batch) override;
  const_tensor<T> forward(const std::vector<const_tensor<T>>& in) override;
  // dout itself for every input: a sum passes its gradient on unchanged.
  const std::vector<const_tensor<T>>& backward(const_tensor<T> dout) override;

 private:
  std::vector<std::size_t> widths_;
  std::size_t rows_ = 0;
  batch_buffer<T> output_;
  std::vector<const_tensor<T>> input_gradient_views_;
};

extern template class elementwise_sum<float>;
extern template class elementwise_sum<double>;

}  // namespace downpour::layers
