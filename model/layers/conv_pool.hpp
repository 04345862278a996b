// The convolution block of the built-in cnn: a SAME convolution (stride 1)
// with a bias per filter, 2x2 max pooling and ReLU, in one layer so that the
// convolution's output never leaves the cache (model/cnn_kernels.hpp holds
// its loops). Images are NHWC rows; the filter bank is TensorFlow's HWIO
// filter as weights [kernel * kernel * in, out], biases [1, out].
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "model/cnn_kernels.hpp"
#include "model/layers/layer.hpp"
#include "model/layers/tensor.hpp"

namespace downpour::layers {

template <class T>
class conv_pool final : public layer<T> {
 public:
  // Images per chunk. A chunk's patches (0.6 MB for the built-in cnn's
  // second block) stay in cache from im2col to the products that read them;
  // a batch of more images goes through in chunks, and its backward makes
  // each chunk's patches again. A network run chunk by chunk (the cnn, with
  // backward_adding) makes them once.
  static constexpr std::size_t chunk_images = 4;

  // Images of shape.h x shape.w x shape.in (h and w even, k odd) to
  // (h/2) x (w/2) x shape.out. The weights start truncated normal with this
  // stddev and carry the L2 term; the biases start at zero. Throws
  // std::invalid_argument naming the shape otherwise.
  conv_pool(cnn_kernels::conv_block shape, float stddev);

  const char* kind() const override { return "conv_pool"; }
  std::size_t input_width() const override { return g_.pixels() * g_.in; }
  std::size_t output_width() const override { return g_.pooled() * g_.out; }
  // scope/weights [k*k*in, out], then scope/biases [1, out].
  std::vector<variable_spec> variables(const std::string& scope) const override;
  std::size_t parameter_count() const override { return g_.patch() * g_.out + g_.out; }
  void reserve(std::size_t max_batch) override;

  const_tensor<T> forward(const_tensor<T> in, const T* params, const pass& p) override;
  const_tensor<T> backward(const_tensor<T> dout, const T* params, T* grad) override;
  void backward_parameters(const_tensor<T> dout, const T* params, T* grad) override;
  const_tensor<T> backward_adding(const_tensor<T> dout, const T* params, T* grad) override;
  void backward_parameters_adding(const_tensor<T> dout, const T* params, T* grad) override;

 private:
  // Images first..first+count of the batch: their patches into cols_
  // (conv_pool.cpp: as planes for one input channel, rows otherwise).
  void patches(std::size_t first, std::size_t count);
  template <class Patches>
  void forward_chunk(const Patches& cols, std::size_t first, std::size_t count, const T* params,
                     tensor<T> out);
  // The chunk's weight and bias gradients added to grad (the layer's slice).
  template <class Patches>
  void backward_chunk(const Patches& cols, std::size_t first, std::size_t count,
                      const_tensor<T> dout, const T* params, T* grad, tensor<T> din);
  // Every chunk's weight and bias gradients added to grad; the input
  // gradient written to din unless din is empty (the input is data).
  void backward_all(const_tensor<T> dout, const T* params, T* grad, tensor<T> din);

  cnn_kernels::conv_block g_;
  float stddev_;
  const_tensor<T> input_;  // the last forward's, read by backward
  batch_buffer<T> output_, input_gradient_;
  std::vector<std::int32_t> arg_;  // where each pooling window's maximum lay
  // One chunk of images: patches, the convolution (and its gradient) as one
  // column per filter, the patches' gradients, the weights' gradient.
  std::vector<T, aligned_allocator<T>> cols_, conv_, dcols_, dweights_;
};

extern template class conv_pool<float>;
extern template class conv_pool<double>;

}  // namespace downpour::layers
