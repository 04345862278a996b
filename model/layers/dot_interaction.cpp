#include "model/layers/dot_interaction.hpp"

#include "model/layers/eigen_views.hpp"

namespace downpour::layers {
namespace {

std::size_t output_width_of(std::size_t features, std::size_t width, interaction_output what) {
  if (features < 2)
    throw std::invalid_argument("dot_interaction: " + std::to_string(features) +
                                " features, expected at least 2");
  if (width == 0) throw std::invalid_argument("dot_interaction: a width of 0, expected at least 1");
  const std::size_t pairs = features * (features - 1) / 2;
  return what == interaction_output::first_then_pairs ? width + pairs : pairs;
}

}  // namespace

template <class T>
dot_interaction<T>::dot_interaction(std::size_t features, std::size_t width,
                                    interaction_output what)
    : features_(features),
      width_(width),
      what_(what),
      widths_(features, width),
      stacked_(features * width),
      output_(output_width_of(features, width, what)),
      gram_(features * features),
      pair_gradient_(features * features),
      stacked_gradient_(features * width),
      writable_(features),
      input_gradient_views_(features) {
  for (std::size_t f = 0; f < features; ++f) input_gradients_.emplace_back(width);
}

template <class T>
void dot_interaction<T>::reserve(std::size_t max_batch) {
  stacked_.reserve(max_batch);
  output_.reserve(max_batch);
  for (auto& g : input_gradients_) g.reserve(max_batch);
}

template <class T>
const_tensor<T> dot_interaction<T>::forward(const std::vector<const_tensor<T>>& in) {
  if (in.size() != features_)
    throw std::invalid_argument("dot_interaction: " + std::to_string(in.size()) +
                                " inputs, expected " + std::to_string(features_));
  rows_ = in[0].rows;
  for (const auto& x : in) {
    check_width(kind(), "an input", width_, x.cols);
    check_rows(kind(), rows_, x.rows);
  }
  const tensor<T> stacked = stacked_.rows(rows_, kind());
  const tensor<T> out = output_.rows(rows_, kind());
  auto gram = as_matrix(tensor<T>(gram_.data(), features_, features_));
  const std::size_t lead = what_ == interaction_output::first_then_pairs ? width_ : 0;
  for (std::size_t e = 0; e < rows_; ++e) {
    auto m = as_matrix(tensor<T>(stacked.row(e), features_, width_));
    for (std::size_t f = 0; f < features_; ++f) m.row(f) = as_row(in[f].row(e), width_);
    gram.noalias() = m * m.transpose();
    T* o = out.row(e);
    for (std::size_t c = 0; c < lead; ++c) o[c] = in[0].row(e)[c];
    for (std::size_t i = 1, k = lead; i < features_; ++i)
      for (std::size_t j = 0; j < i; ++j) o[k++] = gram(i, j);
  }
  return out;
}

// Pair (i, j)'s gradient g reaches vector i as g * v_j and vector j as
// g * v_i: with G the pair gradients below the diagonal, d(stacked) =
// (G + G^T) * stacked.
template <class T>
const std::vector<const_tensor<T>>& dot_interaction<T>::backward(const_tensor<T> dout) {
  check_width(kind(), "an output gradient", output_.width(), dout.cols);
  check_rows(kind(), rows_, dout.rows);
  const tensor<T> stacked = stacked_.rows(rows_, kind());
  auto g = as_matrix(tensor<T>(pair_gradient_.data(), features_, features_));
  auto dm = as_matrix(tensor<T>(stacked_gradient_.data(), features_, width_));
  const std::size_t lead = what_ == interaction_output::first_then_pairs ? width_ : 0;
  for (std::size_t f = 0; f < features_; ++f)
    input_gradient_views_[f] = writable_[f] = input_gradients_[f].rows(rows_, kind());
  g.setZero();
  for (std::size_t e = 0; e < rows_; ++e) {
    const T* d = dout.row(e);
    for (std::size_t i = 1, k = lead; i < features_; ++i)
      for (std::size_t j = 0; j < i; ++j, ++k) g(i, j) = g(j, i) = d[k];
    dm.noalias() = g * as_matrix(const_tensor<T>(stacked.row(e), features_, width_));
    for (std::size_t f = 0; f < features_; ++f) as_row(writable_[f].row(e), width_) = dm.row(f);
    as_row(writable_[0].row(e), width_).head(static_cast<Eigen::Index>(lead)) += as_row(d, lead);
  }
  return input_gradient_views_;
}

template class dot_interaction<float>;
template class dot_interaction<double>;

}  // namespace downpour::layers
