#include "model/layers/dropout.hpp"

#include "model/layers/eigen_views.hpp"
#include "model/sparse_hash.hpp"

namespace downpour::layers {

template <class T>
dropout<T>::dropout(std::size_t width, double rate, std::uint64_t seed)
    : width_(width),
      rate_(rate),
      seed_(seed),
      scale_(width),
      output_(width),
      input_gradient_(width) {
  if (!(rate >= 0.0 && rate < 1.0))
    throw std::invalid_argument("dropout: a rate of " + std::to_string(rate) +
                                ", expected at least 0 and below 1");
}

template <class T>
void dropout<T>::reserve(std::size_t max_batch) {
  scale_.reserve(max_batch);
  output_.reserve(max_batch);
  input_gradient_.reserve(max_batch);
}

template <class T>
const_tensor<T> dropout<T>::forward(const_tensor<T> in, const T*, const pass& p) {
  check_width(kind(), "an input", width_, in.cols);
  last_mode_ = p.mode;
  last_rows_ = in.rows;
  if (p.mode == phase::evaluation) return in;
  const tensor<T> scale = scale_.rows(in.rows, kind());
  const T kept = static_cast<T>(1.0 / (1.0 - rate_));
  const std::uint64_t step_seed = mix64(seed_, p.step);
  for (std::size_t i = 0; i < scale.size(); ++i)
    scale.data[i] = unit_interval(mix64(step_seed, i)) > rate_ ? kept : T(0);
  const tensor<T> out = output_.rows(in.rows, kind());
  as_matrix(out) = as_matrix(in).cwiseProduct(as_matrix(const_tensor<T>(scale)));
  return out;
}

template <class T>
const_tensor<T> dropout<T>::backward(const_tensor<T> dout, const T*, T*) {
  check_width(kind(), "an output gradient", width_, dout.cols);
  check_rows(kind(), last_rows_, dout.rows);
  if (last_mode_ == phase::evaluation) return dout;
  const tensor<T> din = input_gradient_.rows(dout.rows, kind());
  as_matrix(din) = as_matrix(dout).cwiseProduct(as_matrix(scale_.rows(dout.rows, kind())));
  return din;
}

template class dropout<float>;
template class dropout<double>;

}  // namespace downpour::layers
