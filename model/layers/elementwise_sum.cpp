#include "model/layers/elementwise_sum.hpp"

#include "model/layers/eigen_views.hpp"

namespace downpour::layers {
namespace {

std::size_t checked_width(std::size_t inputs, std::size_t width) {
  if (inputs < 2)
    throw std::invalid_argument("elementwise_sum: " + std::to_string(inputs) +
                                " inputs, expected at least 2");
  if (width == 0) throw std::invalid_argument("elementwise_sum: a width of 0, expected at least 1");
  return width;
}

}  // namespace

template <class T>
elementwise_sum<T>::elementwise_sum(std::size_t inputs, std::size_t width)
    : widths_(inputs, width), output_(checked_width(inputs, width)), input_gradient_views_(inputs) {}

template <class T>
void elementwise_sum<T>::reserve(std::size_t max_batch) {
  output_.reserve(max_batch);
}

template <class T>
const_tensor<T> elementwise_sum<T>::forward(const std::vector<const_tensor<T>>& in) {
  if (in.size() != widths_.size())
    throw std::invalid_argument("elementwise_sum: " + std::to_string(in.size()) +
                                " inputs, expected " + std::to_string(widths_.size()));
  rows_ = in[0].rows;
  const tensor<T> out = output_.rows(rows_, kind());
  for (std::size_t k = 0; k < in.size(); ++k) {
    check_width(kind(), "an input", output_.width(), in[k].cols);
    check_rows(kind(), rows_, in[k].rows);
    if (k == 0)
      as_matrix(out) = as_matrix(in[k]);
    else
      as_matrix(out) += as_matrix(in[k]);
  }
  return out;
}

template <class T>
const std::vector<const_tensor<T>>& elementwise_sum<T>::backward(const_tensor<T> dout) {
  check_width(kind(), "an output gradient", output_.width(), dout.cols);
  check_rows(kind(), rows_, dout.rows);
  for (auto& view : input_gradient_views_) view = dout;
  return input_gradient_views_;
}

template class elementwise_sum<float>;
template class elementwise_sum<double>;

}  // namespace downpour::layers
