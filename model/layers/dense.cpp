#include "model/layers/dense.hpp"

#include "model/layers/eigen_views.hpp"

namespace downpour::layers {

template <class T>
dense<T>::dense(std::size_t in, std::size_t out, float stddev)
    : in_(in), out_(out), stddev_(stddev), output_(out), input_gradient_(in) {
  if (in == 0 || out == 0)
    throw std::invalid_argument("dense: " + std::to_string(in) + " inputs and " +
                                std::to_string(out) + " outputs, expected at least 1 of each");
}

template <class T>
std::vector<variable_spec> dense<T>::variables(const std::string& scope) const {
  return {{scope + "/weights", in_, out_, {init_kind::truncated_normal, stddev_}, true},
          {scope + "/biases", 1, out_, {init_kind::zeros, 0.0f}, false}};
}

template <class T>
void dense<T>::reserve(std::size_t max_batch) {
  output_.reserve(max_batch);
  input_gradient_.reserve(max_batch);
}

template <class T>
const_tensor<T> dense<T>::forward(const_tensor<T> in, const T* params, const pass&) {
  check_width(kind(), "an input", in_, in.cols);
  input_ = in;
  const tensor<T> out = output_.rows(in.rows, kind());
  auto y = as_matrix(out);
  y.noalias() = as_matrix(in) * as_matrix(const_tensor<T>(params, in_, out_));
  y.rowwise() += as_row(params + in_ * out_, out_);
  return out;
}

template <class T>
void dense<T>::backward_parameters(const_tensor<T> dout, const T*, T* grad) {
  check_width(kind(), "an output gradient", out_, dout.cols);
  check_rows(kind(), input_.rows, dout.rows);
  as_matrix(tensor<T>(grad, in_, out_)).noalias() = as_matrix(input_).transpose() * as_matrix(dout);
  sum_rows_into(dout, grad + in_ * out_);
}

template <class T>
const_tensor<T> dense<T>::input_gradient(const_tensor<T> dout, const T* params) {
  const tensor<T> din = input_gradient_.rows(dout.rows, kind());
  as_matrix(din).noalias() =
      as_matrix(dout) * as_matrix(const_tensor<T>(params, in_, out_)).transpose();
  return din;
}

template <class T>
const_tensor<T> dense<T>::backward(const_tensor<T> dout, const T* params, T* grad) {
  backward_parameters(dout, params, grad);
  return input_gradient(dout, params);
}

// The bias gradient row by row, as sum_rows_into sums (bit for bit the same
// when grad starts at zero).
template <class T>
void dense<T>::backward_parameters_adding(const_tensor<T> dout, const T*, T* grad) {
  check_width(kind(), "an output gradient", out_, dout.cols);
  check_rows(kind(), input_.rows, dout.rows);
  as_matrix(tensor<T>(grad, in_, out_)).noalias() += as_matrix(input_).transpose() * as_matrix(dout);
  auto sums = as_row(grad + in_ * out_, out_);
  for (std::size_t i = 0; i < dout.rows; ++i) sums += as_row(dout.row(i), out_);
}

template <class T>
const_tensor<T> dense<T>::backward_adding(const_tensor<T> dout, const T* params, T* grad) {
  backward_parameters_adding(dout, params, grad);
  return input_gradient(dout, params);
}

template class dense<float>;
template class dense<double>;

}  // namespace downpour::layers
