// Layers one after another, itself a layer: its forward runs them in order,
// its backward runs their backwards in reverse, and its parameters are
// theirs, one slice after another in the order they were added.
//
//   sequential<float> net(784);
//   net.add(dense<float>(784, 500));
//   net.add(relu<float>(500));
//   net.add(dense<float>(500, 10));
//   net.variables("") == the built-in mlp's: layer1/weights, layer1/biases, ...
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "model/layers/layer.hpp"
#include "model/layers/tensor.hpp"

namespace downpour::layers {

template <class T>
class sequential final : public layer<T> {
 public:
  explicit sequential(std::size_t input_width);

  // Appends l, its variables scoped "layerK" for the K-th layer with
  // parameters (the built-in mlp's names), or by scope; returns it.
  // Throws std::invalid_argument when its input width is not the output
  // width of the layer before.
  template <class L>
  L& add(L l) {
    return add(std::string(), std::move(l));
  }
  template <class L>
  L& add(std::string scope, L l) {
    static_assert(std::is_base_of_v<layer<T>, L>, "sequential holds layers of its scalar");
    auto owned = std::make_unique<L>(std::move(l));
    L& added = *owned;
    append(std::move(scope), std::move(owned));
    return added;
  }

  const char* kind() const override { return "sequential"; }
  std::size_t input_width() const override { return input_width_; }
  std::size_t output_width() const override;
  // Each layer's variables, prefixed "scope/" unless scope is empty.
  std::vector<variable_spec> variables(const std::string& scope) const override;
  std::size_t parameter_count() const override { return parameters_; }
  void reserve(std::size_t max_batch) override;

  const_tensor<T> forward(const_tensor<T> in, const T* params, const pass& p) override;
  const_tensor<T> backward(const_tensor<T> dout, const T* params, T* grad) override;
  // Skips the first layer's input gradient.
  void backward_parameters(const_tensor<T> dout, const T* params, T* grad) override;
  const_tensor<T> backward_adding(const_tensor<T> dout, const T* params, T* grad) override;
  void backward_parameters_adding(const_tensor<T> dout, const T* params, T* grad) override;

 private:
  struct entry {
    std::unique_ptr<layer<T>> op;
    std::string scope;
    std::size_t offset;  // of its slice in the sequential's
  };

  void append(std::string scope, std::unique_ptr<layer<T>> op);
  // How a layer's parameters' gradient reaches grad: written or added.
  enum class gradient_into { written, added };
  // The gradient at the first layer's output, after the others' backwards.
  const_tensor<T> backward_to_first(const_tensor<T> dout, const T* params, T* grad,
                                    gradient_into how);

  std::size_t input_width_;
  std::size_t parameters_ = 0;
  std::size_t scoped_ = 0;  // layers with parameters so far
  std::vector<entry> layers_;
};

extern template class sequential<float>;
extern template class sequential<double>;

}  // namespace downpour::layers
