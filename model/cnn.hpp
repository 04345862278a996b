// A small convolutional network (--model cnn): two blocks of a SAME
// convolution (stride 1), 2x2 max pooling and ReLU, then a dense layer to the
// class logits. Images are NHWC floats; a filter bank is TensorFlow's HWIO
// filter as a matrix [kernel*kernel*in, out]. Eigen stays behind this header.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "data/batcher.hpp"
#include "model/layout.hpp"
#include "model/model.hpp"

namespace downpour {

struct cnn_shape {
  std::size_t height = 28;
  std::size_t width = 28;
  std::size_t channels = 1;
  std::size_t kernel = 5;  // odd: SAME padding is kernel/2 on every side
  // 8 and 32 filters: on Fashion-MNIST as accurate per step as 16 and 32
  // (the dense layer's 7x7x32 inputs matter more than the first block's
  // filters), at half the cost per step (bench_cnn).
  std::size_t filters1 = 8;
  std::size_t filters2 = 32;
  std::size_t classes = 10;

  // Throws std::invalid_argument naming the shape unless height and width are
  // multiples of 4 (two poolings), every size is at least 1, the kernel is
  // odd and there are at least 2 classes.
  void check() const;
  // conv1/weights, conv1/biases, conv2/weights, conv2/biases, dense/weights,
  // dense/biases; weights truncated-normal and regularized, biases zero.
  std::vector<variable_spec> variables() const;
  std::string to_string() const;  // "28x28x1-5x5x8-5x5x32-10"
};

// The built-in network on request.data.dims = {height, width, channels}.
// Throws std::invalid_argument naming the shape for anything else.
std::shared_ptr<const model> make_cnn(const model_request& request);

// The network of any shape (bench_cnn tries other filter counts and kernels);
// throws std::invalid_argument as shape.check() does.
std::shared_ptr<const model> make_cnn(const cnn_shape& shape, float l2);

// Buffers for one batch size, allocated once: a training step allocates
// nothing. Training runs in float; the same code in double checks the
// gradient against finite differences tightly (test_cnn).
template <class Scalar>
class basic_cnn_workspace {
 public:
  basic_cnn_workspace(const cnn_shape& shape, std::size_t batch_size, Scalar l2);
  ~basic_cnn_workspace();
  basic_cnn_workspace(basic_cnn_workspace&&) noexcept;
  basic_cnn_workspace& operator=(basic_cnn_workspace&&) noexcept;

  // Mean softmax cross-entropy + l2 * sum(w^2)/2 over the weights; writes
  // d(loss)/d(params) into grad (every one of the layout's values).
  Scalar loss_and_gradient(const Scalar* params, const batch& b, Scalar* grad);
  Scalar loss(const Scalar* params, const batch& b);
  // The logits, b.size x classes row-major, valid until the next call.
  const Scalar* scores(const Scalar* params, const batch& b);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

extern template class basic_cnn_workspace<float>;
extern template class basic_cnn_workspace<double>;

}  // namespace downpour
