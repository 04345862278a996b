// The MLP's forward and backward passes written out by hand over Eigen
// matrices: an implementation independent of model/layers, against which the
// built-in mlp (composed from the layers) is checked bit for bit.
#pragma once

#include <Eigen/Dense>
#include <cstddef>
#include <type_traits>
#include <vector>

#include "data/batcher.hpp"
#include "model/mlp_spec.hpp"
#include "model/softmax_cross_entropy.hpp"

namespace downpour::testing {

template <class T>
using matrix_of = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using row_of = Eigen::Matrix<T, 1, Eigen::Dynamic>;
using cmap = Eigen::Map<const matrix_of<float>>;

// Where one layer's weights [in, out] and biases [out] sit in the flat buffer.
struct layer_at {
  std::size_t in, out, weights, biases;
};

inline std::vector<layer_at> layers_of(const mlp_spec& s) {
  std::vector<layer_at> layers;
  std::size_t in = s.input, offset = 0;
  auto add = [&](std::size_t out) {
    layers.push_back({in, out, offset, offset + in * out});
    offset += in * out + out;
    in = out;
  };
  for (std::size_t h : s.hidden) add(h);
  add(s.classes);
  return layers;
}

template <class T>
struct handwritten_mlp {
  using mat = matrix_of<T>;
  using map = Eigen::Map<const mat>;
  using wmap = Eigen::Map<const matrix_of<T>>;
  using bmap = Eigen::Map<const row_of<T>>;
  using mrow = Eigen::Map<row_of<T>>;

  mlp_spec spec;
  std::vector<layer_at> layers;  // the hidden ones, then the output
  T l2;
  std::vector<mat> hidden, dhidden;  // per hidden layer: activations, d(loss)/d(inputs)
  mat logits, dlogits;
  mat x_copy;  // double only: the float batch converted

  handwritten_mlp(const mlp_spec& s, std::size_t n, T l2_scale) : spec(s), layers(layers_of(s)), l2(l2_scale) {
    for (std::size_t h : s.hidden) {
      hidden.emplace_back(n, h);
      dhidden.emplace_back(n, h);
    }
    logits.resize(n, s.classes);
    dlogits.resize(n, s.classes);
  }

  std::size_t last() const { return layers.size() - 1; }
  wmap weights(const T* p, std::size_t l) const {
    return wmap(p + layers[l].weights, layers[l].in, layers[l].out);
  }
  bmap biases(const T* p, std::size_t l) const { return bmap(p + layers[l].biases, layers[l].out); }

  // A batch of another size (evaluation's last chunk) resizes the buffers;
  // training's batches all have the size they were made for.
  void fit(std::size_t n) {
    if (static_cast<std::size_t>(logits.rows()) == n) return;
    for (std::size_t l = 0; l < hidden.size(); ++l) {
      hidden[l].resize(n, layers[l].out);
      dhidden[l].resize(n, layers[l].out);
    }
    logits.resize(n, spec.classes);
    dlogits.resize(n, spec.classes);
  }

  // The batch's inputs as T: the float batch itself, or a converted copy.
  map inputs(const batch& b) {
    if constexpr (std::is_same_v<T, float>) {
      return map(b.x.data(), b.size, spec.input);
    } else {
      x_copy = cmap(b.x.data(), b.size, spec.input).template cast<T>();
      return map(x_copy.data(), b.size, spec.input);
    }
  }

  // Calls f with layer l's input: the batch, or the hidden layer before.
  template <class F>
  void with_input(std::size_t l, const map& x, F&& f) {
    if (l == 0)
      f(x);
    else
      f(hidden[l - 1]);
  }

  void forward(const T* p, const batch& b) {
    fit(b.size);
    map x = inputs(b);
    for (std::size_t l = 0; l < hidden.size(); ++l) {
      with_input(l, x, [&](const auto& in) { hidden[l].noalias() = in * weights(p, l); });
      hidden[l].rowwise() += biases(p, l);
      hidden[l] = hidden[l].cwiseMax(T(0));
    }
    with_input(last(), x, [&](const auto& in) { logits.noalias() = in * weights(p, last()); });
    logits.rowwise() += biases(p, last());
  }

  // The mean softmax cross-entropy; dlogits its gradient when want_grad.
  T cross_entropy(const batch& b, bool want_grad) {
    const double total =
        softmax_cross_entropy(logits.data(), b.y.data(), b.size, spec.classes,
                              T(1) / static_cast<T>(b.size), want_grad ? dlogits.data() : nullptr);
    return static_cast<T>(total / static_cast<double>(b.size));
  }

  T l2_term(const T* p) const {
    T squares = T(0);
    for (std::size_t l = 0; l < layers.size(); ++l) squares += weights(p, l).squaredNorm();
    return l2 * T(0.5) * squares;
  }

  // Column sums as row-by-row element-wise adds: Eigen's colwise().sum() peels
  // a few columns off by buffer alignment and reduces those in another order,
  // which would make the result depend on where the gradient buffer lives.
  static void sum_rows(const mat& m, mrow out) {
    out.setZero();
    for (Eigen::Index i = 0; i < m.rows(); ++i) out += m.row(i);
  }

  // From the output layer down: each layer's weight and bias gradients from
  // the gradient at its outputs, then the gradient at its inputs (through
  // the ReLU) for the layer below.
  void backward(const T* p, const batch& b, T* g) {
    map x = inputs(b);
    for (std::size_t l = last() + 1; l-- > 0;) {
      const mat& d = l == last() ? dlogits : dhidden[l];
      Eigen::Map<matrix_of<T>> gw(g + layers[l].weights, layers[l].in, layers[l].out);
      with_input(l, x, [&](const auto& in) { gw.noalias() = in.transpose() * d; });
      gw += l2 * weights(p, l);
      sum_rows(d, mrow(g + layers[l].biases, layers[l].out));
      if (l == 0) break;
      dhidden[l - 1].noalias() = d * weights(p, l).transpose();
      dhidden[l - 1] = (hidden[l - 1].array() > T(0)).select(dhidden[l - 1], T(0));
    }
  }

  T loss_and_gradient(const T* p, const batch& b, T* g) {
    forward(p, b);
    const T ce = cross_entropy(b, true);
    backward(p, b, g);
    return ce + l2_term(p);
  }
};

}  // namespace downpour::testing
