#include "model/layers/sequential.hpp"

#include <stdexcept>

namespace downpour::layers {

template <class T>
sequential<T>::sequential(std::size_t input_width) : input_width_(input_width) {}

template <class T>
std::size_t sequential<T>::output_width() const {
  return layers_.empty() ? input_width_ : layers_.back().op->output_width();
}

template <class T>
void sequential<T>::append(std::string scope, std::unique_ptr<layer<T>> op) {
  if (op->input_width() != output_width())
    throw std::invalid_argument("sequential: layer " + std::to_string(layers_.size() + 1) + " (" +
                                op->kind() + ") takes " + std::to_string(op->input_width()) +
                                " values per example, the one before gives " +
                                std::to_string(output_width()));
  const std::size_t count = op->parameter_count();
  if (count > 0) {
    ++scoped_;
    if (scope.empty()) scope = "layer" + std::to_string(scoped_);
  }
  layers_.push_back({std::move(op), std::move(scope), parameters_});
  parameters_ += count;
}

template <class T>
std::vector<variable_spec> sequential<T>::variables(const std::string& scope) const {
  std::vector<variable_spec> all;
  for (const entry& e : layers_) {
    if (e.op->parameter_count() == 0) continue;
    for (auto& v : e.op->variables(scope.empty() ? e.scope : scope + "/" + e.scope))
      all.push_back(std::move(v));
  }
  return all;
}

template <class T>
void sequential<T>::reserve(std::size_t max_batch) {
  for (entry& e : layers_) e.op->reserve(max_batch);
}

template <class T>
const_tensor<T> sequential<T>::forward(const_tensor<T> in, const T* params, const pass& p) {
  for (entry& e : layers_) in = e.op->forward(in, params + e.offset, p);
  return in;
}

template <class T>
const_tensor<T> sequential<T>::backward_to_first(const_tensor<T> dout, const T* params, T* grad,
                                                 gradient_into how) {
  for (std::size_t l = layers_.size(); l-- > 1;) {
    const entry& e = layers_[l];
    dout = how == gradient_into::added
               ? e.op->backward_adding(dout, params + e.offset, grad + e.offset)
               : e.op->backward(dout, params + e.offset, grad + e.offset);
  }
  return dout;
}

template <class T>
const_tensor<T> sequential<T>::backward(const_tensor<T> dout, const T* params, T* grad) {
  if (layers_.empty()) return dout;
  dout = backward_to_first(dout, params, grad, gradient_into::written);
  return layers_[0].op->backward(dout, params + layers_[0].offset, grad + layers_[0].offset);
}

template <class T>
void sequential<T>::backward_parameters(const_tensor<T> dout, const T* params, T* grad) {
  if (layers_.empty()) return;
  dout = backward_to_first(dout, params, grad, gradient_into::written);
  layers_[0].op->backward_parameters(dout, params + layers_[0].offset, grad + layers_[0].offset);
}

template <class T>
const_tensor<T> sequential<T>::backward_adding(const_tensor<T> dout, const T* params, T* grad) {
  if (layers_.empty()) return dout;
  dout = backward_to_first(dout, params, grad, gradient_into::added);
  return layers_[0].op->backward_adding(dout, params + layers_[0].offset,
                                        grad + layers_[0].offset);
}

template <class T>
void sequential<T>::backward_parameters_adding(const_tensor<T> dout, const T* params, T* grad) {
  if (layers_.empty()) return;
  dout = backward_to_first(dout, params, grad, gradient_into::added);
  layers_[0].op->backward_parameters_adding(dout, params + layers_[0].offset,
                                            grad + layers_[0].offset);
}

template class sequential<float>;
template class sequential<double>;

}  // namespace downpour::layers
