// The losses a network ends in, each the mean over the batch (TensorFlow's
// default reduction) with its gradient: softmax cross-entropy (classes),
// sigmoid cross-entropy (a probability: click-through models), mean squared
// error (a value). forward keeps views of its arguments: they must stay
// valid until backward.
#pragma once

#include <cstddef>
#include <cstdint>

#include "model/layers/tensor.hpp"

namespace downpour::layers {

// Mean over rows of logsumexp(row) - row[label]: the built-in models' loss,
// computed by the same code (model/softmax_cross_entropy.hpp).
template <class T>
class softmax_cross_entropy_loss {
 public:
  explicit softmax_cross_entropy_loss(std::size_t classes);
  void reserve(std::size_t max_batch);
  // Throws std::out_of_range naming the row for a label outside [0, classes).
  T forward(const_tensor<T> logits, const std::int32_t* labels);
  // d(loss)/d(logits): (softmax(row) - onehot(label)) / rows.
  const_tensor<T> backward();

  // The rows as a chunk of a batch of batch_rows rows (a network run chunk
  // by chunk): the chunk's summed loss, in double; backward() then gives the
  // gradient of the batch's mean, (softmax(row) - onehot(label)) / batch_rows.
  double forward_sum(const_tensor<T> logits, const std::int32_t* labels, std::size_t batch_rows);

 private:
  std::size_t classes_;
  const_tensor<T> logits_;
  const std::int32_t* labels_ = nullptr;
  std::size_t batch_rows_ = 0;  // the mean's divisor
  batch_buffer<T> gradient_;
};

// Mean over all values of max(x, 0) - x * z + log(1 + exp(-|x|)): the
// cross-entropy of sigmoid(x) against z in [0, 1], stable for any x
// (tf.nn.sigmoid_cross_entropy_with_logits).
template <class T>
class sigmoid_cross_entropy_loss {
 public:
  explicit sigmoid_cross_entropy_loss(std::size_t width);
  void reserve(std::size_t max_batch);
  // Throws std::invalid_argument for targets of another shape.
  T forward(const_tensor<T> logits, const_tensor<T> targets);
  // Labels 0 or 1, one per row, for logits of width 1 (a click or not).
  // Throws std::out_of_range naming the row for any other label.
  T forward(const_tensor<T> logits, const std::int32_t* labels);
  // d(loss)/d(logits): (sigmoid(x) - z) / values.
  const_tensor<T> backward();

 private:
  std::size_t width_;
  const_tensor<T> logits_, targets_;
  batch_buffer<T> label_targets_, gradient_;
};

// Mean over all values of (prediction - target)^2 (tf.losses.mean_squared_error).
template <class T>
class mean_squared_error_loss {
 public:
  explicit mean_squared_error_loss(std::size_t width);
  void reserve(std::size_t max_batch);
  // Throws std::invalid_argument for targets of another shape.
  T forward(const_tensor<T> predictions, const_tensor<T> targets);
  // d(loss)/d(predictions): 2 * (prediction - target) / values.
  const_tensor<T> backward();

 private:
  std::size_t width_;
  const_tensor<T> predictions_, targets_;
  batch_buffer<T> gradient_;
};

extern template class softmax_cross_entropy_loss<float>;
extern template class softmax_cross_entropy_loss<double>;
extern template class sigmoid_cross_entropy_loss<float>;
extern template class sigmoid_cross_entropy_loss<double>;
extern template class mean_squared_error_loss<float>;
extern template class mean_squared_error_loss<double>;

}  // namespace downpour::layers
