// The two shapes of building block a network is composed of: a layer (one
// input, one output: dense, ReLU, sigmoid, dropout, a sequential of layers)
// and a join (several inputs, one output: concatenate, dot interaction).
// Each writes its forward and backward once; sequential and graph chain them
// so that a model writes only its forward structure.
//
// Parameters live in the model's one flat buffer (model/layout.hpp): a layer
// is handed a pointer to its own slice, laid out as its variables() list
// them, and writes d(loss)/d(parameters) into the same slice of the flat
// gradient buffer. That buffer belongs to the caller, who passes it for the
// layer to fill, as model_workspace::loss_and_gradient's grad is filled.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "model/layers/tensor.hpp"
#include "model/layout.hpp"

namespace downpour::layers {

// A layer's views stay valid until its next forward (outputs) or backward
// (input gradients); the input given to forward must stay valid until the
// backward that follows it, which reads it.
template <class T>
class layer {
 public:
  virtual ~layer() = default;
  // "dense", "relu", ...: named in errors.
  virtual const char* kind() const = 0;
  virtual std::size_t input_width() const = 0;
  virtual std::size_t output_width() const = 0;
  // Its variables, named scope/..., in the order they lie in its slice.
  virtual std::vector<variable_spec> variables(const std::string& /*scope*/) const { return {}; }
  // The floats of its slice: the sum of its variables' sizes.
  virtual std::size_t parameter_count() const { return 0; }
  // Sizes the buffers for batches of up to max_batch rows.
  virtual void reserve(std::size_t max_batch) = 0;

  // in: batch x input_width; the result: batch x output_width.
  virtual const_tensor<T> forward(const_tensor<T> in, const T* params, const pass& p) = 0;
  // dout: d(loss)/d(output) of the last forward. Writes its parameters'
  // gradient (every float of its slice) into grad and returns d(loss)/d(in).
  virtual const_tensor<T> backward(const_tensor<T> dout, const T* params, T* grad) = 0;
  // The same when nobody needs d(loss)/d(in) (the input is data): a dense
  // layer then skips a product as large as its forward one.
  virtual void backward_parameters(const_tensor<T> dout, const T* params, T* grad) {
    backward(dout, params, grad);
  }

  // The same, the parameters' gradient added to grad's slice instead of
  // written over it: a batch run in chunks, each forward and straight back
  // while its buffers are in cache (the cnn), sums its chunks' gradients in
  // place. The default adds what backward writes to a buffer of its own (a
  // layer without parameters adds nothing); dense and conv_pool add in
  // their products.
  virtual const_tensor<T> backward_adding(const_tensor<T> dout, const T* params, T* grad) {
    if (parameter_count() == 0) return backward(dout, params, grad);
    std::vector<T> own(parameter_count());
    const const_tensor<T> din = backward(dout, params, own.data());
    for (std::size_t i = 0; i < own.size(); ++i) grad[i] += own[i];
    return din;
  }
  virtual void backward_parameters_adding(const_tensor<T> dout, const T* params, T* grad) {
    backward_adding(dout, params, grad);
  }
};

// Several inputs, no parameters.
template <class T>
class join {
 public:
  virtual ~join() = default;
  virtual const char* kind() const = 0;
  // The width of each input, in order.
  virtual const std::vector<std::size_t>& input_widths() const = 0;
  virtual std::size_t output_width() const = 0;
  virtual void reserve(std::size_t max_batch) = 0;

  // in: one view per input, each batch x its width, all of one batch.
  virtual const_tensor<T> forward(const std::vector<const_tensor<T>>& in) = 0;
  // d(loss)/d(input) for each input, in order.
  virtual const std::vector<const_tensor<T>>& backward(const_tensor<T> dout) = 0;
};

}  // namespace downpour::layers
