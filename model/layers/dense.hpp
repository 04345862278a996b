// A fully connected layer: out = in * weights + biases, with weights
// [in, out] and biases [1, out] (TensorFlow's layout, the built-in mlp's).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "model/layers/layer.hpp"
#include "model/layers/tensor.hpp"

namespace downpour::layers {

template <class T>
class dense final : public layer<T> {
 public:
  // The weights start truncated normal with this stddev and carry the L2
  // term; the biases start at zero: the built-in mlp's variables.
  dense(std::size_t in, std::size_t out, float stddev = 0.1f);

  const char* kind() const override { return "dense"; }
  std::size_t input_width() const override { return in_; }
  std::size_t output_width() const override { return out_; }
  // scope/weights [in, out], then scope/biases [1, out].
  std::vector<variable_spec> variables(const std::string& scope) const override;
  std::size_t parameter_count() const override { return in_ * out_ + out_; }
  void reserve(std::size_t max_batch) override;

  const_tensor<T> forward(const_tensor<T> in, const T* params, const pass& p) override;
  const_tensor<T> backward(const_tensor<T> dout, const T* params, T* grad) override;
  void backward_parameters(const_tensor<T> dout, const T* params, T* grad) override;
  const_tensor<T> backward_adding(const_tensor<T> dout, const T* params, T* grad) override;
  void backward_parameters_adding(const_tensor<T> dout, const T* params, T* grad) override;

 private:
  std::size_t in_, out_;
  float stddev_;
  const_tensor<T> input_gradient(const_tensor<T> dout, const T* params);

  const_tensor<T> input_;  // the last forward's, read by backward
  batch_buffer<T> output_, input_gradient_;
};

extern template class dense<float>;
extern template class dense<double>;

}  // namespace downpour::layers
