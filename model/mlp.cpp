#include "model/mlp.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

namespace downpour {
namespace {

using matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using cmap = Eigen::Map<const matrix>;
using mmap = Eigen::Map<matrix>;
using crow = Eigen::Map<const Eigen::RowVectorXf>;
using mrow = Eigen::Map<Eigen::RowVectorXf>;

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
using const_views = views<cmap, crow, const float*>;
using mut_views = views<mmap, mrow, float*>;

}  // namespace

struct mlp_workspace::impl {
  model_shape shape;
  float l2;
  matrix hidden, logits, dlogits, dhidden;

  impl(const model_shape& s, std::size_t n, float l2_scale)
      : shape(s), l2(l2_scale), hidden(n, s.hidden), logits(n, s.classes),
        dlogits(n, s.classes), dhidden(n, s.hidden) {}

  void forward(const const_views& p, const batch& b) {
    cmap x(b.x.data(), b.size, shape.input);
    hidden.noalias() = x * p.w1;
    hidden.rowwise() += p.b1;
    hidden = hidden.cwiseMax(0.0f);
    logits.noalias() = hidden * p.w2;
    logits.rowwise() += p.b2;
  }

  // Softmax cross-entropy, stable for huge logits; fills dlogits with
  // (softmax - onehot) / batch when want_grad.
  float cross_entropy(const batch& b, bool want_grad) {
    double total = 0.0;
    const float inv_n = 1.0f / static_cast<float>(b.size);
    for (std::size_t i = 0; i < b.size; ++i) {
      auto row = logits.row(i);
      float m = row.maxCoeff();
      float sum = (row.array() - m).exp().sum();
      float lse = m + std::log(sum);
      total += lse - row(b.y[i]);
      if (want_grad) {
        dlogits.row(i) = ((row.array() - lse).exp() * inv_n).matrix();
        dlogits(i, b.y[i]) -= inv_n;
      }
    }
    return static_cast<float>(total / static_cast<double>(b.size));
  }

  float l2_term(const const_views& p) const {
    return l2 * 0.5f * (p.w1.squaredNorm() + p.w2.squaredNorm());
  }

  // Column sums as row-by-row element-wise adds: Eigen's colwise().sum() peels
  // a few columns off by buffer alignment and reduces those in another order,
  // which would make the result depend on where the gradient buffer lives.
  static void sum_rows(const matrix& m, mrow& out) {
    out.setZero();
    for (Eigen::Index i = 0; i < m.rows(); ++i) out += m.row(i);
  }

  void backward(const const_views& p, const batch& b, mut_views g) {
    cmap x(b.x.data(), b.size, shape.input);
    g.w2.noalias() = hidden.transpose() * dlogits;
    g.w2 += l2 * p.w2;
    sum_rows(dlogits, g.b2);
    dhidden.noalias() = dlogits * p.w2.transpose();
    dhidden = (hidden.array() > 0.0f).select(dhidden, 0.0f);
    g.w1.noalias() = x.transpose() * dhidden;
    g.w1 += l2 * p.w1;
    sum_rows(dhidden, g.b1);
  }
};

mlp_workspace::mlp_workspace(const model_shape& shape, std::size_t batch_size, float l2)
    : impl_(std::make_unique<impl>(shape, batch_size, l2)) {}
mlp_workspace::~mlp_workspace() = default;
mlp_workspace::mlp_workspace(mlp_workspace&&) noexcept = default;
mlp_workspace& mlp_workspace::operator=(mlp_workspace&&) noexcept = default;

const model_shape& mlp_workspace::shape() const { return impl_->shape; }

float mlp_workspace::loss_and_gradient(const float* params, const batch& b, float* grad) {
  const_views p(params, impl_->shape);
  impl_->forward(p, b);
  float ce = impl_->cross_entropy(b, true);
  impl_->backward(p, b, mut_views(grad, impl_->shape));
  return ce + impl_->l2_term(p);
}

float mlp_workspace::loss(const float* params, const batch& b) {
  const_views p(params, impl_->shape);
  impl_->forward(p, b);
  return impl_->cross_entropy(b, false) + impl_->l2_term(p);
}

accuracy_report evaluate(const model_shape& shape, const float* params, const image_set& set) {
  const std::size_t chunk = 1000;
  const_views p(params, shape);
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
