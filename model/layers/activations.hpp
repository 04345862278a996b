// Element-wise activations: ReLU (the built-in mlp's hidden layers) and the
// logistic sigmoid.
#pragma once

#include <cstddef>

#include "model/layers/layer.hpp"
#include "model/layers/tensor.hpp"

namespace downpour::layers {

// max(x, 0); the gradient passes where the output is positive (at 0 it is 0,
// as TensorFlow's ReluGrad and the built-in mlp take it).
template <class T>
class relu final : public layer<T> {
 public:
  explicit relu(std::size_t width);
  const char* kind() const override { return "relu"; }
  std::size_t input_width() const override { return width_; }
  std::size_t output_width() const override { return width_; }
  void reserve(std::size_t max_batch) override;
  const_tensor<T> forward(const_tensor<T> in, const T* params, const pass& p) override;
  const_tensor<T> backward(const_tensor<T> dout, const T* params, T* grad) override;

 private:
  std::size_t width_;
  const_tensor<T> output_view_;
  batch_buffer<T> output_, input_gradient_;
};

// 1 / (1 + exp(-x)); its gradient y * (1 - y) from the output.
template <class T>
class sigmoid final : public layer<T> {
 public:
  explicit sigmoid(std::size_t width);
  const char* kind() const override { return "sigmoid"; }
  std::size_t input_width() const override { return width_; }
  std::size_t output_width() const override { return width_; }
  void reserve(std::size_t max_batch) override;
  const_tensor<T> forward(const_tensor<T> in, const T* params, const pass& p) override;
  const_tensor<T> backward(const_tensor<T> dout, const T* params, T* grad) override;

 private:
  std::size_t width_;
  const_tensor<T> output_view_;
  batch_buffer<T> output_, input_gradient_;
};

extern template class relu<float>;
extern template class relu<double>;
extern template class sigmoid<float>;
extern template class sigmoid<double>;

}  // namespace downpour::layers
