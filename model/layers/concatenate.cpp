#include "model/layers/concatenate.hpp"

#include <algorithm>
#include <numeric>

#include "model/layers/eigen_views.hpp"

namespace downpour::layers {
namespace {

std::size_t checked_sum(const std::vector<std::size_t>& widths) {
  if (widths.size() < 2)
    throw std::invalid_argument("concatenate: " + std::to_string(widths.size()) +
                                " inputs, expected at least 2");
  for (std::size_t i = 0; i < widths.size(); ++i)
    if (widths[i] == 0)
      throw std::invalid_argument("concatenate: input " + std::to_string(i) +
                                  " has a width of 0, expected at least 1");
  return std::accumulate(widths.begin(), widths.end(), std::size_t{0});
}

}  // namespace

template <class T>
concatenate<T>::concatenate(std::vector<std::size_t> widths)
    : widths_(std::move(widths)),
      output_(checked_sum(widths_)),
      input_gradient_views_(widths_.size()) {
  for (std::size_t w : widths_) input_gradients_.emplace_back(w);
}

template <class T>
void concatenate<T>::reserve(std::size_t max_batch) {
  output_.reserve(max_batch);
  for (auto& g : input_gradients_) g.reserve(max_batch);
}

template <class T>
const_tensor<T> concatenate<T>::forward(const std::vector<const_tensor<T>>& in) {
  if (in.size() != widths_.size())
    throw std::invalid_argument("concatenate: " + std::to_string(in.size()) + " inputs, expected " +
                                std::to_string(widths_.size()));
  rows_ = in[0].rows;
  const tensor<T> out = output_.rows(rows_, kind());
  std::size_t column = 0;
  for (std::size_t k = 0; k < in.size(); ++k) {
    check_width(kind(), "an input", widths_[k], in[k].cols);
    check_rows(kind(), rows_, in[k].rows);
    as_matrix(out).middleCols(static_cast<Eigen::Index>(column),
                              static_cast<Eigen::Index>(widths_[k])) = as_matrix(in[k]);
    column += widths_[k];
  }
  return out;
}

template <class T>
const std::vector<const_tensor<T>>& concatenate<T>::backward(const_tensor<T> dout) {
  check_width(kind(), "an output gradient", output_.width(), dout.cols);
  check_rows(kind(), rows_, dout.rows);
  std::size_t column = 0;
  for (std::size_t k = 0; k < widths_.size(); ++k) {
    const tensor<T> din = input_gradients_[k].rows(dout.rows, kind());
    as_matrix(din) = as_matrix(dout).middleCols(static_cast<Eigen::Index>(column),
                                                static_cast<Eigen::Index>(widths_[k]));
    input_gradient_views_[k] = din;
    column += widths_[k];
  }
  return input_gradient_views_;
}

template class concatenate<float>;
template class concatenate<double>;

}  // namespace downpour::layers
