#include "model/mlp.hpp"

#include <Eigen/Dense>
#include <type_traits>

#include "model/layers/losses.hpp"
#include "model/layers/sequential.hpp"

namespace downpour {

template <class T>
struct basic_mlp_workspace<T>::impl {
  using matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

  mlp_spec spec;
  model_layout layout;
  T l2;
  layers::sequential<T> net;
  layers::softmax_cross_entropy_loss<T> xent;
  std::size_t reserved = 0;
  matrix x_copy;  // double only: the float batch converted

  impl(const mlp_spec& s, std::size_t n, T l2_scale)
      : spec(s), layout(s.layout("mlp")), l2(l2_scale), net(mlp_network<T>(s)), xent(s.classes) {
    fit(n);
  }

  // Evaluation's chunks may be larger than the batches the workspace was
  // made for; training's never are, so a step allocates nothing.
  void fit(std::size_t n) {
    if (n <= reserved) return;
    net.reserve(n);
    xent.reserve(n);
    reserved = n;
  }

  // The batch's inputs as T: the float batch itself, or a converted copy.
  layers::const_tensor<T> inputs(const batch& b) {
    if constexpr (std::is_same_v<T, float>) {
      return {b.x.data(), b.size, spec.input};
    } else {
      using floats = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
      x_copy = Eigen::Map<const floats>(b.x.data(), b.size, spec.input).template cast<T>();
      return {x_copy.data(), b.size, spec.input};
    }
  }

  layers::const_tensor<T> forward(const T* p, const batch& b) {
    fit(b.size);
    return net.forward(inputs(b), p, layers::pass{});
  }

  // l2 * sum(w^2) / 2 over the weights (the regularized variables); adds
  // l2 * w to their gradient when there is one.
  T l2_term(const T* p, T* grad) const {
    T squares = T(0);
    for (const variable_info& v : layout.variables()) {
      if (!v.regularized) continue;
      Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, 1>> w(p + v.offset, v.size());
      squares += w.squaredNorm();
      if (grad) Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, 1>>(grad + v.offset, v.size()) += l2 * w;
    }
    return l2 * T(0.5) * squares;
  }
};

template <class T>
basic_mlp_workspace<T>::basic_mlp_workspace(const mlp_spec& spec, std::size_t batch_size, T l2)
    : impl_(std::make_unique<impl>(spec, batch_size, l2)) {}
template <class T>
basic_mlp_workspace<T>::~basic_mlp_workspace() = default;
template <class T>
basic_mlp_workspace<T>::basic_mlp_workspace(basic_mlp_workspace&&) noexcept = default;
template <class T>
basic_mlp_workspace<T>& basic_mlp_workspace<T>::operator=(basic_mlp_workspace&&) noexcept = default;

template <class T>
T basic_mlp_workspace<T>::loss_and_gradient(const T* params, const batch& b, T* grad) {
  const T ce = impl_->xent.forward(impl_->forward(params, b), b.y.data());
  impl_->net.backward_parameters(impl_->xent.backward(), params, grad);
  return ce + impl_->l2_term(params, grad);
}

template <class T>
T basic_mlp_workspace<T>::loss(const T* params, const batch& b) {
  const T ce = impl_->xent.forward(impl_->forward(params, b), b.y.data());
  return ce + impl_->l2_term(params, nullptr);
}

template <class T>
const T* basic_mlp_workspace<T>::scores(const T* params, const batch& b) {
  return impl_->forward(params, b).data;
}

template class basic_mlp_workspace<float>;
template class basic_mlp_workspace<double>;

}  // namespace downpour
