// basic_cnn_workspace: the network's forward and backward pass on a batch.
#include "model/cnn.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "model/cnn_kernels.hpp"

namespace downpour {
namespace {

using cnn_kernels::col2im_add;
using cnn_kernels::conv_block;
using cnn_kernels::im2col;
using cnn_kernels::pool_backward;
using cnn_kernels::pool_forward;

template <class T>
using matrix_of = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using row_of = Eigen::Matrix<T, 1, Eigen::Dynamic>;

// Images per im2col chunk: one chunk's patches of the second convolution
// (4 x 196 x 400 floats for the built-in net) stay in the core's cache
// instead of a whole batch's (50 x that) streaming through memory twice.
constexpr std::size_t chunk_images = 4;

// The variables in cnn_shape::variables() order.
enum variable : std::size_t { conv1_w, conv1_b, conv2_w, conv2_b, dense_w, dense_b };

}  // namespace

template <class T>
struct basic_cnn_workspace<T>::impl {
  using mat = matrix_of<T>;
  using map = Eigen::Map<mat>;
  using cmap = Eigen::Map<const mat>;

  cnn_shape s;
  T l2;
  std::size_t capacity;
  conv_block c1, c2;
  std::size_t dense_in;
  std::vector<std::size_t> offsets;  // of the six variables in the flat buffer
  std::vector<T> x_copy;             // double only: the float batch converted
  const T* images = nullptr;         // the batch forward() last read, as T
  std::vector<T> cols, conv, dcols;  // one chunk, sized for the larger block
  std::vector<T> act1, act2, dact2;  // the whole batch
  std::vector<T> dact1;              // one chunk
  std::vector<std::int32_t> arg1, arg2;
  mat logits, dlogits;

  impl(const cnn_shape& shape, std::size_t n, T l2_scale)
      : s(shape), l2(l2_scale), capacity(n),
        c1{s.height, s.width, s.channels, s.filters1, s.kernel},
        c2{s.height / 2, s.width / 2, s.filters1, s.filters2, s.kernel},
        dense_in((s.height / 4) * (s.width / 4) * s.filters2), logits(n, s.classes),
        dlogits(n, s.classes) {
    s.check();
    std::size_t offset = 0;
    for (const auto& v : s.variables()) {
      offsets.push_back(offset);
      offset += v.rows * v.cols;
    }
    const std::size_t m = std::min(n, chunk_images);
    cols.resize(m * std::max(c1.pixels() * c1.patch(), c2.pixels() * c2.patch()));
    dcols.resize(m * c2.pixels() * c2.patch());
    conv.resize(m * std::max(c1.pixels() * c1.out, c2.pixels() * c2.out));
    act1.resize(n * c1.pooled() * c1.out);
    dact1.resize(m * c2.pixels() * c2.in);
    arg1.resize(act1.size());
    act2.resize(n * dense_in);
    dact2.resize(act2.size());
    arg2.resize(act2.size());
    if constexpr (!std::is_same_v<T, float>) x_copy.resize(n * c1.pixels() * c1.in);
  }

  // A weight matrix: conv1_w, conv2_w or dense_w.
  cmap weights(const T* p, variable var) const {
    const std::size_t in = var == conv1_w ? c1.patch() : var == conv2_w ? c2.patch() : dense_in;
    const std::size_t out = var == conv1_w ? c1.out : var == conv2_w ? c2.out : s.classes;
    return cmap(p + offsets[var], in, out);
  }

  // The batch's images as T: the float batch itself, or a converted copy.
  const T* inputs(const batch& b) {
    const std::size_t features = c1.pixels() * c1.in;
    if (b.size > capacity || b.input_size != features)
      throw std::invalid_argument(
          "cnn: a batch of " + std::to_string(b.size) + " x " + std::to_string(b.input_size) +
          " features does not fit a workspace for " + std::to_string(capacity) + " x " +
          std::to_string(features));
    if constexpr (std::is_same_v<T, float>) {
      return b.x.data();
    } else {
      std::copy_n(b.x.data(), b.size * features, x_copy.data());
      return x_copy.data();
    }
  }

  void conv_forward(const conv_block& g, const T* in, std::size_t count, const cmap& w,
                    const T* bias, T* act, std::int32_t* arg) {
    im2col(g, in, count, cols.data());
    map z(conv.data(), count * g.pixels(), g.out);
    z.noalias() = cmap(cols.data(), count * g.pixels(), g.patch()) * w;
    pool_forward(g, conv.data(), count, bias, act, arg);
  }

  // Adds this chunk's weight and bias gradients to gw and gb, and its input
  // gradient to din unless din is null (the first block's input is the data).
  void conv_backward(const conv_block& g, const T* in, std::size_t count, const cmap& w,
                     const T* act, const std::int32_t* arg, const T* dact, map gw, T* gb,
                     T* din) {
    pool_backward(g, act, arg, dact, count, conv.data(), gb);
    cmap dz(conv.data(), count * g.pixels(), g.out);
    im2col(g, in, count, cols.data());
    gw.noalias() += cmap(cols.data(), count * g.pixels(), g.patch()).transpose() * dz;
    if (!din) return;
    map(dcols.data(), count * g.pixels(), g.patch()).noalias() = dz * w.transpose();
    col2im_add(g, dcols.data(), count, din);
  }

  // Both blocks one chunk of images at a time: the first block's output for
  // the chunk is still in cache when the second reads it.
  void forward(const T* p, const batch& b) {
    images = inputs(b);
    for (std::size_t i = 0; i < b.size; i += chunk_images) {
      const std::size_t count = std::min(chunk_images, b.size - i);
      const std::size_t at1 = i * c2.pixels() * c2.in, at2 = i * dense_in;
      conv_forward(c1, images + i * c1.pixels() * c1.in, count, weights(p, conv1_w), p + offsets[conv1_b],
                   act1.data() + at1, arg1.data() + at1);
      conv_forward(c2, act1.data() + at1, count, weights(p, conv2_w), p + offsets[conv2_b],
                   act2.data() + at2, arg2.data() + at2);
    }
    auto z = logits.topRows(b.size);
    z.noalias() = cmap(act2.data(), b.size, dense_in) * weights(p, dense_w);
    z.rowwise() += Eigen::Map<const row_of<T>>(p + offsets[dense_b], s.classes);
  }

  // Mean softmax cross-entropy, stable for huge logits; also fills dlogits
  // with (softmax - onehot) / batch, which costs little next to the forward.
  T cross_entropy(const batch& b) {
    double total = 0.0;
    const T inv_n = T(1) / static_cast<T>(b.size);
    for (std::size_t i = 0; i < b.size; ++i) {
      auto row = logits.row(i);
      const T m = row.maxCoeff();
      const T lse = m + std::log((row.array() - m).exp().sum());
      total += lse - row(b.y[i]);
      dlogits.row(i) = ((row.array() - lse).exp() * inv_n).matrix();
      dlogits(i, b.y[i]) -= inv_n;
    }
    return static_cast<T>(total / static_cast<double>(b.size));
  }

  T l2_term(const T* p) const {
    return l2 * T(0.5) *
           (weights(p, conv1_w).squaredNorm() + weights(p, conv2_w).squaredNorm() +
            weights(p, dense_w).squaredNorm());
  }

  map grad_weights(T* g, variable var) const {
    const cmap shape = weights(g, var);
    return map(g + offsets[var], shape.rows(), shape.cols());
  }

  // After forward() on the same batch.
  void backward(const T* p, const batch& b, T* g) {
    const std::size_t n = b.size;
    map gwd = grad_weights(g, dense_w), gw2 = grad_weights(g, conv2_w), gw1 = grad_weights(g, conv1_w);
    gwd.noalias() = cmap(act2.data(), n, dense_in).transpose() * dlogits.topRows(n);
    // Row by row: Eigen's colwise().sum() reduces in an order that depends on
    // where the gradient buffer lies, which must not change the result.
    Eigen::Map<row_of<T>> gbd(g + offsets[dense_b], s.classes);
    gbd.setZero();
    for (std::size_t i = 0; i < n; ++i) gbd += dlogits.row(i);
    map(dact2.data(), n, dense_in).noalias() = dlogits.topRows(n) * weights(p, dense_w).transpose();
    gw2.setZero();
    gw1.setZero();
    std::fill_n(g + offsets[conv2_b], c2.out, T(0));
    std::fill_n(g + offsets[conv1_b], c1.out, T(0));
    for (std::size_t i = 0; i < n; i += chunk_images) {
      const std::size_t count = std::min(chunk_images, n - i);
      const std::size_t at1 = i * c2.pixels() * c2.in, at2 = i * dense_in;
      std::fill_n(dact1.data(), count * c2.pixels() * c2.in, T(0));
      conv_backward(c2, act1.data() + at1, count, weights(p, conv2_w), act2.data() + at2,
                    arg2.data() + at2, dact2.data() + at2, gw2, g + offsets[conv2_b], dact1.data());
      conv_backward(c1, images + i * c1.pixels() * c1.in, count, weights(p, conv1_w),
                    act1.data() + at1, arg1.data() + at1, dact1.data(), gw1, g + offsets[conv1_b],
                    nullptr);
    }
    gwd += l2 * weights(p, dense_w);
    gw2 += l2 * weights(p, conv2_w);
    gw1 += l2 * weights(p, conv1_w);
  }
};

template <class T>
basic_cnn_workspace<T>::basic_cnn_workspace(const cnn_shape& shape, std::size_t batch_size,
                                            T l2)
    : impl_(std::make_unique<impl>(shape, batch_size, l2)) {}
template <class T>
basic_cnn_workspace<T>::~basic_cnn_workspace() = default;
template <class T>
basic_cnn_workspace<T>::basic_cnn_workspace(basic_cnn_workspace&&) noexcept = default;
template <class T>
basic_cnn_workspace<T>& basic_cnn_workspace<T>::operator=(basic_cnn_workspace&&) noexcept =
    default;

template <class T>
T basic_cnn_workspace<T>::loss_and_gradient(const T* params, const batch& b, T* grad) {
  impl_->forward(params, b);
  const T ce = impl_->cross_entropy(b);
  impl_->backward(params, b, grad);
  return ce + impl_->l2_term(params);
}

template <class T>
T basic_cnn_workspace<T>::loss(const T* params, const batch& b) {
  impl_->forward(params, b);
  return impl_->cross_entropy(b) + impl_->l2_term(params);
}

template <class T>
const T* basic_cnn_workspace<T>::scores(const T* params, const batch& b) {
  impl_->forward(params, b);
  return impl_->logits.data();
}

template class basic_cnn_workspace<float>;
template class basic_cnn_workspace<double>;

}  // namespace downpour
