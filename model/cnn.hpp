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
#include "model/layers/sequential.hpp"
#include "model/model.hpp"
#include "model/network_workspace.hpp"

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

// The network: conv1 and conv2 (layers::conv_pool, weights drawn with
// stddev sqrt(2 / fan-in)) and the dense layer to the class logits.
template <class T>
layers::sequential<T> cnn_network(const cnn_shape& shape);

// The cnn's workspace (model/network_workspace.hpp): the layers of
// cnn_network do the calculus, the workspace adds the loss and the L2 term.
// A batch goes forward and straight back conv_pool::chunk_images images at
// a time, so that each chunk's patches are made once and read in cache.
template <class Scalar>
class basic_cnn_workspace : public network_workspace<Scalar> {
 public:
  basic_cnn_workspace(const cnn_shape& shape, std::size_t batch_size, Scalar l2);
};

extern template class basic_cnn_workspace<float>;
extern template class basic_cnn_workspace<double>;

}  // namespace downpour
