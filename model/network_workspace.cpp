#include "model/network_workspace.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "model/layers/losses.hpp"

namespace downpour {

template <class T>
struct network_workspace<T>::impl {
  using matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using vector = Eigen::Matrix<T, Eigen::Dynamic, 1>;

  layers::sequential<T> net;
  model_layout layout;
  T l2;
  std::size_t classes;
  std::size_t chunk;  // 0: the whole batch
  layers::softmax_cross_entropy_loss<T> xent;
  std::size_t reserved = 0;
  matrix x_copy;  // double only: the float batch converted
  matrix logits;  // chunked: the whole batch's, for scores()

  impl(layers::sequential<T> network, model_layout variables, std::size_t class_count,
       std::size_t n, T l2_scale, std::size_t chunk_rows)
      : net(std::move(network)),
        layout(std::move(variables)),
        l2(l2_scale),
        classes(class_count),
        chunk(chunk_rows),
        xent(class_count) {
    fit(n);
  }

  // Evaluation's chunks may be larger than the batches the workspace was
  // made for; training's never are, so a step allocates nothing.
  void fit(std::size_t n) {
    if (n <= reserved) return;
    const std::size_t rows = chunk == 0 ? n : std::min(n, chunk);
    net.reserve(rows);
    xent.reserve(rows);
    if (chunk != 0) logits.resize(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(classes));
    reserved = n;
  }

  // The batch's inputs as T: the float batch itself, or a converted copy.
  layers::const_tensor<T> inputs(const batch& b) {
    const std::size_t width = net.input_width();
    if (b.input_size != width)
      throw std::invalid_argument(layout.kind() + ": a batch of " + std::to_string(b.input_size) +
                                  " features per example, expected " + std::to_string(width));
    if constexpr (std::is_same_v<T, float>) {
      return {b.x.data(), b.size, width};
    } else {
      using floats = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
      x_copy = Eigen::Map<const floats>(b.x.data(), b.size, width).template cast<T>();
      return {x_copy.data(), b.size, width};
    }
  }

  layers::const_tensor<T> forward(const T* p, const batch& b) {
    fit(b.size);
    return net.forward(inputs(b), p, layers::pass{});
  }

  // Chunk by chunk: each forward, its logits kept for scores(), then
  // then_each(logits, first row).
  template <class Then>
  void each_chunk(const T* p, const batch& b, Then then_each) {
    fit(b.size);
    const layers::const_tensor<T> in = inputs(b);
    for (std::size_t first = 0; first < b.size; first += chunk) {
      const std::size_t count = std::min(chunk, b.size - first);
      const auto z = net.forward({in.row(first), count, in.cols}, p, layers::pass{});
      std::copy_n(z.data, z.size(), logits.row(static_cast<Eigen::Index>(first)).data());
      then_each(z, first);
    }
  }

  // The batch's mean loss chunk by chunk, without the L2 term; unless grad
  // is null, each chunk goes straight back with its gradient added to grad,
  // which starts at zero.
  T chunked_loss(const T* p, const batch& b, T* grad) {
    if (grad) std::fill_n(grad, layout.size(), T(0));
    double total = 0.0;
    each_chunk(p, b, [&](layers::const_tensor<T> z, std::size_t first) {
      total += xent.forward_sum(z, b.y.data() + first, b.size);
      if (grad) net.backward_parameters_adding(xent.backward(), p, grad);
    });
    return static_cast<T>(total / static_cast<double>(b.size));
  }

  // l2 * sum(w^2) / 2 over the regularized variables (the job's --l2, the
  // built-in models'); adds its gradient when there is one. A variable's own
  // `reg` is not here: the runtime's update applies it (model/row_update.hpp).
  T l2_term(const T* p, T* grad) const {
    T squares = T(0);
    for (const variable_info& v : layout.variables()) {
      if (!v.regularized) continue;
      Eigen::Map<const vector> w(p + v.offset, v.size());
      squares += w.squaredNorm();
      if (grad) Eigen::Map<vector>(grad + v.offset, v.size()) += l2 * w;
    }
    return l2 * T(0.5) * squares;
  }
};

template <class T>
network_workspace<T>::network_workspace(layers::sequential<T> net, model_layout layout,
                                        std::size_t classes, std::size_t batch_size, T l2,
                                        std::size_t chunk_rows)
    : impl_(std::make_unique<impl>(std::move(net), std::move(layout), classes, batch_size, l2,
                                   chunk_rows)) {}
template <class T>
network_workspace<T>::~network_workspace() = default;
template <class T>
network_workspace<T>::network_workspace(network_workspace&&) noexcept = default;
template <class T>
network_workspace<T>& network_workspace<T>::operator=(network_workspace&&) noexcept = default;

template <class T>
T network_workspace<T>::loss_and_gradient(const T* params, const batch& b, T* grad) {
  if (impl_->chunk != 0) {
    const T ce = impl_->chunked_loss(params, b, grad);
    return ce + impl_->l2_term(params, grad);
  }
  const T ce = impl_->xent.forward(impl_->forward(params, b), b.y.data());
  impl_->net.backward_parameters(impl_->xent.backward(), params, grad);
  return ce + impl_->l2_term(params, grad);
}

template <class T>
T network_workspace<T>::loss(const T* params, const batch& b) {
  if (impl_->chunk != 0)
    return impl_->chunked_loss(params, b, nullptr) + impl_->l2_term(params, nullptr);
  const T ce = impl_->xent.forward(impl_->forward(params, b), b.y.data());
  return ce + impl_->l2_term(params, nullptr);
}

template <class T>
const T* network_workspace<T>::scores(const T* params, const batch& b) {
  if (impl_->chunk == 0) return impl_->forward(params, b).data;
  impl_->each_chunk(params, b, [](layers::const_tensor<T>, std::size_t) {});
  return impl_->logits.data();
}

template class network_workspace<float>;
template class network_workspace<double>;

}  // namespace downpour
