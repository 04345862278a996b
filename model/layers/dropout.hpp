// Dropout as TensorFlow's tf.nn.dropout: in training each value is kept with
// probability 1 - rate and scaled by 1 / (1 - rate), else zeroed; in
// evaluation the layer passes its input through.
#pragma once

#include <cstddef>
#include <cstdint>

#include "model/layers/layer.hpp"
#include "model/layers/tensor.hpp"

namespace downpour::layers {

template <class T>
class dropout final : public layer<T> {
 public:
  // Throws std::invalid_argument naming rate unless 0 <= rate < 1.
  dropout(std::size_t width, double rate, std::uint64_t seed);
  const char* kind() const override { return "dropout"; }
  std::size_t input_width() const override { return width_; }
  std::size_t output_width() const override { return width_; }
  void reserve(std::size_t max_batch) override;
  // Which values are kept is a hash of (seed, p.step, row in the batch,
  // column): the same seed and step drop the same values in every process
  // and on every rerun, without a generator's state to carry along.
  const_tensor<T> forward(const_tensor<T> in, const T* params, const pass& p) override;
  const_tensor<T> backward(const_tensor<T> dout, const T* params, T* grad) override;

 private:
  std::size_t width_;
  double rate_;
  std::uint64_t seed_;
  phase last_mode_ = phase::training;
  std::size_t last_rows_ = 0;
  batch_buffer<T> scale_;  // per value: 0 or 1 / (1 - rate), of the last training forward
  batch_buffer<T> output_, input_gradient_;
};

extern template class dropout<float>;
extern template class dropout<double>;

}  // namespace downpour::layers
