#include "model/layers/activations.hpp"

#include <cmath>

#include "model/layers/eigen_views.hpp"

namespace downpour::layers {

template <class T>
relu<T>::relu(std::size_t width) : width_(width), output_(width), input_gradient_(width) {}

template <class T>
void relu<T>::reserve(std::size_t max_batch) {
  output_.reserve(max_batch);
  input_gradient_.reserve(max_batch);
}

template <class T>
const_tensor<T> relu<T>::forward(const_tensor<T> in, const T*, const pass&) {
  check_width(kind(), "an input", width_, in.cols);
  const tensor<T> out = output_.rows(in.rows, kind());
  as_matrix(out) = as_matrix(in).cwiseMax(T(0));
  output_view_ = out;
  return out;
}

template <class T>
const_tensor<T> relu<T>::backward(const_tensor<T> dout, const T*, T*) {
  check_width(kind(), "an output gradient", width_, dout.cols);
  check_rows(kind(), output_view_.rows, dout.rows);
  const tensor<T> din = input_gradient_.rows(dout.rows, kind());
  as_matrix(din) = (as_matrix(output_view_).array() > T(0)).select(as_matrix(dout), T(0));
  return din;
}

template <class T>
sigmoid<T>::sigmoid(std::size_t width) : width_(width), output_(width), input_gradient_(width) {}

template <class T>
void sigmoid<T>::reserve(std::size_t max_batch) {
  output_.reserve(max_batch);
  input_gradient_.reserve(max_batch);
}

template <class T>
const_tensor<T> sigmoid<T>::forward(const_tensor<T> in, const T*, const pass&) {
  check_width(kind(), "an input", width_, in.cols);
  const tensor<T> out = output_.rows(in.rows, kind());
  // exp(-x) overflows to inf for very negative x, giving exactly 0: no NaN.
  as_matrix(out) = (T(1) + (-as_matrix(in).array()).exp()).inverse().matrix();
  output_view_ = out;
  return out;
}

template <class T>
const_tensor<T> sigmoid<T>::backward(const_tensor<T> dout, const T*, T*) {
  check_width(kind(), "an output gradient", width_, dout.cols);
  check_rows(kind(), output_view_.rows, dout.rows);
  const tensor<T> din = input_gradient_.rows(dout.rows, kind());
  const auto y = as_matrix(output_view_).array();
  as_matrix(din) = (as_matrix(dout).array() * y * (T(1) - y)).matrix();
  return din;
}

template class relu<float>;
template class relu<double>;
template class sigmoid<float>;
template class sigmoid<double>;

}  // namespace downpour::layers
