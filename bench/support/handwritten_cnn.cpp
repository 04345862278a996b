#include "bench/support/handwritten_cnn.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "model/cnn_kernels.hpp"
#include "model/softmax_cross_entropy.hpp"

namespace downpour {
namespace {

using cnn_kernels::col2im_add;
using cnn_kernels::conv_block;
using cnn_kernels::im2col;
using cnn_kernels::im2col_planes;
using cnn_kernels::pool_backward;
using cnn_kernels::pool_forward;

template <class T>
using matrix_of = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using planes_of = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
template <class T>
using row_of = Eigen::Matrix<T, 1, Eigen::Dynamic>;

// Images per chunk. A chunk goes forward and, in training, straight back
// (every image's loss gradient is its own), so im2col runs once per step and
// a chunk's patches (1.5 MB for the built-in net) are still in cache for the
// backward pass; 1 to 8 images per chunk measured the same.
constexpr std::size_t chunk_images = 4;

// The variables in cnn_shape::variables() order.
enum variable : std::size_t { conv1_w, conv1_b, conv2_w, conv2_b, dense_w, dense_b };

}  // namespace

template <class T>
struct handwritten_cnn<T>::impl {
  using mat = matrix_of<T>;
  using map = Eigen::Map<mat>;
  using cmap = Eigen::Map<const mat>;
  using planes = planes_of<T>;  // a convolution's output, one column per channel

  cnn_shape s;
  T l2;
  std::size_t capacity;
  conv_block c1, c2;
  std::size_t dense_in;
  std::vector<std::size_t> offsets;  // of the six variables in the flat buffer
  std::size_t parameters = 0;
  std::vector<T> x_copy;             // double only: the float batch converted
  const T* images = nullptr;         // the batch being run, as T
  // One chunk: each block's patches, pooled activations and where each
  // pooling window's maximum lay, and the gradients flowing back.
  std::vector<T> cols1, cols2, conv, act1, act2, dact1, dact2, dcols;
  std::vector<std::int32_t> arg1, arg2;
  mat logits, dlogits;  // the whole batch
  // The convolutions' weight gradients summed over the chunks: Eigen's
  // product into a [patch, out] matrix is faster column-major too.
  planes gw1, gw2;

  impl(const cnn_shape& shape, std::size_t n, T l2_scale)
      : s(shape), l2(l2_scale), capacity(n),
        c1{s.height, s.width, s.channels, s.filters1, s.kernel},
        c2{s.height / 2, s.width / 2, s.filters1, s.filters2, s.kernel},
        dense_in((s.height / 4) * (s.width / 4) * s.filters2), logits(n, s.classes),
        dlogits(n, s.classes), gw1(c1.patch(), c1.out), gw2(c2.patch(), c2.out) {
    s.check();
    for (const auto& v : s.variables()) {
      offsets.push_back(parameters);
      parameters += v.rows * v.cols;
    }
    const std::size_t m = std::min(n, chunk_images);
    cols1.resize(m * c1.pixels() * c1.patch());
    cols2.resize(m * c2.pixels() * c2.patch());
    dcols.resize(cols2.size());
    conv.resize(m * std::max(c1.pixels() * c1.out, c2.pixels() * c2.out));
    act1.resize(m * c1.pooled() * c1.out);
    dact1.resize(act1.size());
    arg1.resize(act1.size());
    act2.resize(m * dense_in);
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
  map grad_weights(T* g, variable var) const {
    const cmap shape = weights(g, var);
    return map(g + offsets[var], shape.rows(), shape.cols());
  }

  // Takes the batch's images as T: the float batch itself, or a converted copy.
  void start(const batch& b) {
    const std::size_t features = c1.pixels() * c1.in;
    if (b.size > capacity || b.input_size != features)
      throw std::invalid_argument(
          "cnn: a batch of " + std::to_string(b.size) + " x " + std::to_string(b.input_size) +
          " features does not fit a workspace for " + std::to_string(capacity) + " x " +
          std::to_string(features));
    if constexpr (std::is_same_v<T, float>) {
      images = b.x.data();
    } else {
      std::copy_n(b.x.data(), b.size * features, x_copy.data());
      images = x_copy.data();
    }
  }

  // The first block's patches are planes (im2col_planes), the second's rows.
  Eigen::Map<const planes> patches1(std::size_t count) const {
    return Eigen::Map<const planes>(cols1.data(), count * c1.pixels(), c1.patch());
  }
  cmap patches2(std::size_t count) const {
    return cmap(cols2.data(), count * c2.pixels(), c2.patch());
  }

  template <class Patches>
  void conv_forward(const conv_block& g, const Patches& cols, std::size_t count, const cmap& w,
                    const T* bias, T* act, std::int32_t* arg) {
    Eigen::Map<planes> z(conv.data(), count * g.pixels(), g.out);
    z.noalias() = cols * w;
    pool_forward(g, conv.data(), count, bias, act, arg);
  }

  // Adds the chunk's weight and bias gradients to gw and gb, and writes its
  // input gradient to din unless din is null (the first block's input is the data).
  template <class Patches>
  void conv_backward(const conv_block& g, const Patches& cols, std::size_t count, const cmap& w,
                     const T* act, const std::int32_t* arg, const T* dact, planes& gw, T* gb,
                     T* din) {
    pool_backward(g, act, arg, dact, count, conv.data(), gb);
    Eigen::Map<const planes> dz(conv.data(), count * g.pixels(), g.out);
    gw.noalias() += cols.transpose() * dz;
    if (!din) return;
    map(dcols.data(), count * g.pixels(), g.patch()).noalias() = dz * w.transpose();
    std::fill_n(din, count * g.pixels() * g.in, T(0));
    col2im_add(g, dcols.data(), count, din);
  }

  // Images first..first+count through both blocks into their rows of logits.
  void forward(const T* p, std::size_t first, std::size_t count) {
    im2col_planes(c1, images + first * c1.pixels() * c1.in, count, cols1.data());
    conv_forward(c1, patches1(count), count, weights(p, conv1_w), p + offsets[conv1_b],
                 act1.data(), arg1.data());
    im2col(c2, act1.data(), count, cols2.data());
    conv_forward(c2, patches2(count), count, weights(p, conv2_w), p + offsets[conv2_b],
                 act2.data(), arg2.data());
    auto z = logits.middleRows(first, count);
    z.noalias() = cmap(act2.data(), count, dense_in) * weights(p, dense_w);
    z.rowwise() += Eigen::Map<const row_of<T>>(p + offsets[dense_b], s.classes);
  }

  // Adds the gradient of the chunk forward() last ran to g.
  void backward(const T* p, std::size_t first, std::size_t count, T* g) {
    const auto dl = dlogits.middleRows(first, count);
    grad_weights(g, dense_w).noalias() += cmap(act2.data(), count, dense_in).transpose() * dl;
    // Row by row: Eigen's colwise().sum() reduces in an order that depends on
    // where the gradient buffer lies, which must not change the result.
    Eigen::Map<row_of<T>> gb(g + offsets[dense_b], s.classes);
    for (std::size_t i = 0; i < count; ++i) gb += dl.row(i);
    map(dact2.data(), count, dense_in).noalias() = dl * weights(p, dense_w).transpose();
    conv_backward(c2, patches2(count), count, weights(p, conv2_w), act2.data(), arg2.data(),
                  dact2.data(), gw2, g + offsets[conv2_b], dact1.data());
    conv_backward(c1, patches1(count), count, weights(p, conv1_w), act1.data(), arg1.data(),
                  dact1.data(), gw1, g + offsets[conv1_b], nullptr);
  }

  // The summed softmax cross-entropy of rows first..first+count; also sets
  // their dlogits, which costs little next to the forward pass.
  double cross_entropy(const batch& b, std::size_t first, std::size_t count) {
    return softmax_cross_entropy(logits.row(first).data(), b.y.data() + first, count, s.classes,
                                 T(1) / static_cast<T>(b.size), dlogits.row(first).data());
  }

  T l2_term(const T* p) const {
    return l2 * T(0.5) *
           (weights(p, conv1_w).squaredNorm() + weights(p, conv2_w).squaredNorm() +
            weights(p, dense_w).squaredNorm());
  }

  // Every chunk forward, then then_each(first, count) on it while its
  // buffers hold it; the batch's loss.
  template <class Then>
  T loss(const T* p, const batch& b, Then then_each) {
    start(b);
    double total = 0.0;
    for (std::size_t i = 0; i < b.size; i += chunk_images) {
      const std::size_t count = std::min(chunk_images, b.size - i);
      forward(p, i, count);
      total += cross_entropy(b, i, count);
      then_each(i, count);
    }
    return static_cast<T>(total / static_cast<double>(b.size)) + l2_term(p);
  }

  // Before the first chunk's backward().
  void zero_gradient(T* g) {
    std::fill_n(g, parameters, T(0));
    gw1.setZero();
    gw2.setZero();
  }

  // After the last chunk's backward(): the summed convolution gradients and
  // every weight's L2 term.
  void finish_gradient(const T* p, T* g) {
    grad_weights(g, conv1_w) += gw1;
    grad_weights(g, conv2_w) += gw2;
    for (variable v : {conv1_w, conv2_w, dense_w}) grad_weights(g, v) += l2 * weights(p, v);
  }
};

template <class T>
handwritten_cnn<T>::handwritten_cnn(const cnn_shape& shape, std::size_t batch_size,
                                            T l2)
    : impl_(std::make_unique<impl>(shape, batch_size, l2)) {}
template <class T>
handwritten_cnn<T>::~handwritten_cnn() = default;
template <class T>
handwritten_cnn<T>::handwritten_cnn(handwritten_cnn&&) noexcept = default;
template <class T>
handwritten_cnn<T>& handwritten_cnn<T>::operator=(handwritten_cnn&&) noexcept =
    default;

template <class T>
T handwritten_cnn<T>::loss_and_gradient(const T* params, const batch& b, T* grad) {
  impl& w = *impl_;
  w.zero_gradient(grad);
  const T loss = w.loss(params, b, [&](std::size_t first, std::size_t count) {
    w.backward(params, first, count, grad);
  });
  w.finish_gradient(params, grad);
  return loss;
}

template <class T>
T handwritten_cnn<T>::loss(const T* params, const batch& b) {
  return impl_->loss(params, b, [](std::size_t, std::size_t) {});
}

template <class T>
const T* handwritten_cnn<T>::scores(const T* params, const batch& b) {
  impl_->start(b);
  for (std::size_t i = 0; i < b.size; i += chunk_images)
    impl_->forward(params, i, std::min(chunk_images, b.size - i));
  return impl_->logits.data();
}

template class handwritten_cnn<float>;
template class handwritten_cnn<double>;

}  // namespace downpour
