#include "model/mlp.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <type_traits>

namespace downpour {
namespace {

template <class T>
using matrix_of = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using row_of = Eigen::Matrix<T, 1, Eigen::Dynamic>;
using matrix = matrix_of<float>;
using cmap = Eigen::Map<const matrix>;

// The four variables viewed inside a flat buffer.
template <class Mat, class Row, class Ptr>
struct views {
  Mat w1, w2;
  Row b1, b2;
  views(Ptr p, const model_shape& s)
      : w1(p, s.input, s.hidden),
        w2(p + s.input * s.hidden + s.hidden, s.hidden, s.classes),
        b1(p + s.input * s.hidden, s.hidden),
        b2(p + s.input * s.hidden + s.hidden + s.hidden * s.classes, s.classes) {}
};
template <class T>
using const_views =
    views<Eigen::Map<const matrix_of<T>>, Eigen::Map<const row_of<T>>, const T*>;
template <class T>
using mut_views = views<Eigen::Map<matrix_of<T>>, Eigen::Map<row_of<T>>, T*>;

}  // namespace

template <class T>
struct basic_mlp_workspace<T>::impl {
  using mat = matrix_of<T>;
  using map = Eigen::Map<const mat>;
  using mrow = Eigen::Map<row_of<T>>;

  model_shape shape;
  T l2;
  mat hidden, logits, dlogits, dhidden;
  mat x_copy;  // double only: the float batch converted

  impl(const model_shape& s, std::size_t n, T l2_scale)
      : shape(s), l2(l2_scale), hidden(n, s.hidden), logits(n, s.classes),
        dlogits(n, s.classes), dhidden(n, s.hidden) {}

  // The batch's inputs as T: the float batch itself, or a converted copy.
  map inputs(const batch& b) {
    if constexpr (std::is_same_v<T, float>) {
      return map(b.x.data(), b.size, shape.input);
    } else {
      x_copy = cmap(b.x.data(), b.size, shape.input).template cast<T>();
      return map(x_copy.data(), b.size, shape.input);
    }
  }

  void forward(const const_views<T>& p, const batch& b) {
    map x = inputs(b);
    hidden.noalias() = x * p.w1;
    hidden.rowwise() += p.b1;
    hidden = hidden.cwiseMax(T(0));
    logits.noalias() = hidden * p.w2;
    logits.rowwise() += p.b2;
  }

  // Softmax cross-entropy, stable for huge logits; fills dlogits with
  // (softmax - onehot) / batch when want_grad.
  T cross_entropy(const batch& b, bool want_grad) {
    double total = 0.0;
    const T inv_n = T(1) / static_cast<T>(b.size);
    for (std::size_t i = 0; i < b.size; ++i) {
      auto row = logits.row(i);
      T m = row.maxCoeff();
      T sum = (row.array() - m).exp().sum();
      T lse = m + std::log(sum);
      total += lse - row(b.y[i]);
      if (want_grad) {
        dlogits.row(i) = ((row.array() - lse).exp() * inv_n).matrix();
        dlogits(i, b.y[i]) -= inv_n;
      }
    }
    return static_cast<T>(total / static_cast<double>(b.size));
  }

  T l2_term(const const_views<T>& p) const {
    return l2 * T(0.5) * (p.w1.squaredNorm() + p.w2.squaredNorm());
  }

  // Column sums as row-by-row element-wise adds: Eigen's colwise().sum() peels
  // a few columns off by buffer alignment and reduces those in another order,
  // which would make the result depend on where the gradient buffer lives.
  static void sum_rows(const mat& m, mrow& out) {
    out.setZero();
    for (Eigen::Index i = 0; i < m.rows(); ++i) out += m.row(i);
  }

  void backward(const const_views<T>& p, const batch& b, mut_views<T> g) {
    map x = inputs(b);
    g.w2.noalias() = hidden.transpose() * dlogits;
    g.w2 += l2 * p.w2;
    sum_rows(dlogits, g.b2);
    dhidden.noalias() = dlogits * p.w2.transpose();
    dhidden = (hidden.array() > T(0)).select(dhidden, T(0));
    g.w1.noalias() = x.transpose() * dhidden;
    g.w1 += l2 * p.w1;
    sum_rows(dhidden, g.b1);
  }
};

template <class T>
basic_mlp_workspace<T>::basic_mlp_workspace(const model_shape& shape, std::size_t batch_size,
                                            T l2)
    : impl_(std::make_unique<impl>(shape, batch_size, l2)) {}
template <class T>
basic_mlp_workspace<T>::~basic_mlp_workspace() = default;
template <class T>
basic_mlp_workspace<T>::basic_mlp_workspace(basic_mlp_workspace&&) noexcept = default;
template <class T>
basic_mlp_workspace<T>& basic_mlp_workspace<T>::operator=(basic_mlp_workspace&&) noexcept =
    default;

template <class T>
const model_shape& basic_mlp_workspace<T>::shape() const {
  return impl_->shape;
}

template <class T>
T basic_mlp_workspace<T>::loss_and_gradient(const T* params, const batch& b, T* grad) {
  const_views<T> p(params, impl_->shape);
  impl_->forward(p, b);
  T ce = impl_->cross_entropy(b, true);
  impl_->backward(p, b, mut_views<T>(grad, impl_->shape));
  return ce + impl_->l2_term(p);
}

template <class T>
T basic_mlp_workspace<T>::loss(const T* params, const batch& b) {
  const_views<T> p(params, impl_->shape);
  impl_->forward(p, b);
  return impl_->cross_entropy(b, false) + impl_->l2_term(p);
}

template class basic_mlp_workspace<float>;
template class basic_mlp_workspace<double>;

accuracy_report evaluate(const model_shape& shape, const float* params, const image_set& set) {
  const std::size_t chunk = 1000;
  const_views<float> p(params, shape);
  std::vector<std::size_t> correct(shape.classes, 0), seen(shape.classes, 0);
  matrix x(chunk, shape.input), hidden(chunk, shape.hidden), logits(chunk, shape.classes);
  for (std::size_t start = 0; start < set.count; start += chunk) {
    std::size_t n = std::min(chunk, set.count - start);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < shape.input; ++j)
        x(i, j) = static_cast<float>(set.image(start + i)[j]) * (1.0f / 255.0f);
    hidden.topRows(n).noalias() = x.topRows(n) * p.w1;
    hidden.topRows(n) = (hidden.topRows(n).rowwise() + p.b1).cwiseMax(0.0f);
    logits.topRows(n).noalias() = hidden.topRows(n) * p.w2;
    logits.topRows(n).rowwise() += p.b2;
    for (std::size_t i = 0; i < n; ++i) {
      Eigen::Index predicted;
      logits.row(i).maxCoeff(&predicted);
      std::size_t label = set.labels[start + i];
      ++seen[label];
      if (static_cast<std::size_t>(predicted) == label) ++correct[label];
    }
  }
  accuracy_report r;
  std::size_t total_correct = 0;
  for (std::size_t c = 0; c < shape.classes; ++c) {
    total_correct += correct[c];
    r.per_class.push_back(seen[c] ? static_cast<double>(correct[c]) / seen[c] : 0.0);
  }
  r.overall = set.count ? static_cast<double>(total_correct) / set.count : 0.0;
  return r;
}

}  // namespace downpour
