#include "model/layers/conv_pool.hpp"

#include <algorithm>

#include "model/layers/eigen_views.hpp"

namespace downpour::layers {
namespace {

// A convolution's output and weight gradient, one column per filter: Eigen's
// product fills a matrix with few columns two times faster that way.
template <class T>
using planes = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;

template <class T>
auto planes_at(T* data, std::size_t rows, std::size_t cols) {
  using plain = std::remove_const_t<T>;
  using shape = std::conditional_t<std::is_const_v<T>, const planes<plain>, planes<plain>>;
  return Eigen::Map<shape>(data, static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols));
}

}  // namespace

template <class T>
conv_pool<T>::conv_pool(cnn_kernels::conv_block shape, float stddev)
    : g_(shape), stddev_(stddev), output_(shape.pooled() * shape.out),
      input_gradient_(shape.pixels() * shape.in) {
  if (g_.h == 0 || g_.w == 0 || g_.h % 2 || g_.w % 2 || g_.in == 0 || g_.out == 0 ||
      g_.k % 2 == 0)
    throw std::invalid_argument(
        "conv_pool: images " + std::to_string(g_.h) + "x" + std::to_string(g_.w) + "x" +
        std::to_string(g_.in) + ", kernel " + std::to_string(g_.k) + ", " +
        std::to_string(g_.out) + " filters: expected an even height and width (2x2 pooling), "
        "an odd kernel and at least 1 channel and filter");
}

template <class T>
std::vector<variable_spec> conv_pool<T>::variables(const std::string& scope) const {
  return {{scope + "/weights", g_.patch(), g_.out, {init_kind::truncated_normal, stddev_}, true},
          {scope + "/biases", 1, g_.out, {init_kind::zeros, 0.0f}, false}};
}

template <class T>
void conv_pool<T>::reserve(std::size_t max_batch) {
  output_.reserve(max_batch);
  input_gradient_.reserve(max_batch);
  arg_.assign(max_batch * output_width(), 0);
  const std::size_t m = std::min(max_batch, chunk_images);
  cols_.assign(m * g_.pixels() * g_.patch(), T(0));
  dcols_.assign(cols_.size(), T(0));
  conv_.assign(m * g_.pixels() * g_.out, T(0));
  dweights_.assign(g_.patch() * g_.out, T(0));
}

// One input channel: patches as planes, each plane row a shifted image row
// copied in one run (cnn_kernels::im2col_planes); more: rows of longer runs.
template <class T>
void conv_pool<T>::patches(std::size_t first, std::size_t count) {
  const T* images = input_.row(first);
  if (g_.in == 1)
    cnn_kernels::im2col_planes(g_, images, count, cols_.data());
  else
    cnn_kernels::im2col(g_, images, count, cols_.data());
}

template <class T>
template <class Patches>
void conv_pool<T>::forward_chunk(const Patches& cols, std::size_t first, std::size_t count,
                                 const T* params, tensor<T> out) {
  auto z = planes_at(conv_.data(), count * g_.pixels(), g_.out);
  z.noalias() = cols * as_matrix(const_tensor<T>(params, g_.patch(), g_.out));
  cnn_kernels::pool_forward(g_, conv_.data(), count, params + g_.patch() * g_.out, out.row(first),
                            arg_.data() + first * output_width());
}

template <class T>
const_tensor<T> conv_pool<T>::forward(const_tensor<T> in, const T* params, const pass&) {
  check_width(kind(), "an input", input_width(), in.cols);
  input_ = in;
  const tensor<T> out = output_.rows(in.rows, kind());
  for (std::size_t first = 0; first < in.rows; first += chunk_images) {
    const std::size_t count = std::min(chunk_images, in.rows - first);
    patches(first, count);
    const std::size_t rows = count * g_.pixels();
    if (g_.in == 1)
      forward_chunk(planes_at(cols_.data(), rows, g_.patch()), first, count, params, out);
    else
      forward_chunk(as_matrix(tensor<T>(cols_.data(), rows, g_.patch())), first, count, params,
                    out);
  }
  return out;
}

template <class T>
template <class Patches>
void conv_pool<T>::backward_chunk(const Patches& cols, std::size_t first, std::size_t count,
                                  const_tensor<T> dout, const T* params, T* grad,
                                  tensor<T> din) {
  const std::size_t at = first * output_width();
  cnn_kernels::pool_backward(g_, output_.rows(input_.rows, kind()).row(first), arg_.data() + at,
                             dout.row(first), count, conv_.data(), grad + g_.patch() * g_.out);
  const auto dz = planes_at(static_cast<const T*>(conv_.data()), count * g_.pixels(), g_.out);
  // The product into a matrix of one column per filter (two times faster
  // than into the gradient's rows), then added.
  auto dweights = planes_at(dweights_.data(), g_.patch(), g_.out);
  dweights.noalias() = cols.transpose() * dz;
  as_matrix(tensor<T>(grad, g_.patch(), g_.out)) += dweights;
  if (din.data == nullptr) return;
  as_matrix(tensor<T>(dcols_.data(), count * g_.pixels(), g_.patch())).noalias() =
      dz * as_matrix(const_tensor<T>(params, g_.patch(), g_.out)).transpose();
  T* images = din.row(first);
  std::fill_n(images, count * input_width(), T(0));
  cnn_kernels::col2im_add(g_, dcols_.data(), count, images);
}

template <class T>
void conv_pool<T>::backward_all(const_tensor<T> dout, const T* params, T* grad, tensor<T> din) {
  check_width(kind(), "an output gradient", output_width(), dout.cols);
  check_rows(kind(), input_.rows, dout.rows);
  for (std::size_t first = 0; first < dout.rows; first += chunk_images) {
    const std::size_t count = std::min(chunk_images, dout.rows - first);
    // One chunk's patches are still there from the forward; a batch's would
    // not stay in cache, so each chunk's are made again.
    if (dout.rows > chunk_images) patches(first, count);
    const std::size_t rows = count * g_.pixels();
    if (g_.in == 1)
      backward_chunk(planes_at(static_cast<const T*>(cols_.data()), rows, g_.patch()), first,
                     count, dout, params, grad, din);
    else
      backward_chunk(as_matrix(const_tensor<T>(cols_.data(), rows, g_.patch())), first, count,
                     dout, params, grad, din);
  }
}

template <class T>
void conv_pool<T>::backward_parameters_adding(const_tensor<T> dout, const T* params, T* grad) {
  backward_all(dout, params, grad, tensor<T>());
}

template <class T>
const_tensor<T> conv_pool<T>::backward_adding(const_tensor<T> dout, const T* params, T* grad) {
  const tensor<T> din = input_gradient_.rows(dout.rows, kind());
  backward_all(dout, params, grad, din);
  return din;
}

template <class T>
void conv_pool<T>::backward_parameters(const_tensor<T> dout, const T* params, T* grad) {
  std::fill_n(grad, parameter_count(), T(0));
  backward_parameters_adding(dout, params, grad);
}

template <class T>
const_tensor<T> conv_pool<T>::backward(const_tensor<T> dout, const T* params, T* grad) {
  std::fill_n(grad, parameter_count(), T(0));
  return backward_adding(dout, params, grad);
}

template class conv_pool<float>;
template class conv_pool<double>;

}  // namespace downpour::layers
