#include "model/layers/losses.hpp"

#include <cmath>

#include "model/layers/eigen_views.hpp"
#include "model/softmax_cross_entropy.hpp"

namespace downpour::layers {
namespace {

void check_label(const char* who, std::size_t row, std::int32_t label, std::size_t classes) {
  if (label < 0 || static_cast<std::size_t>(label) >= classes)
    throw std::out_of_range(std::string(who) + ": row " + std::to_string(row) + " has label " +
                            std::to_string(label) + ", expected 0 to " +
                            std::to_string(classes - 1));
}

template <class T>
void check_same_shape(const char* who, const_tensor<T> a, const_tensor<T> b) {
  check_width(who, "targets", a.cols, b.cols);
  check_rows(who, a.rows, b.rows);
}

}  // namespace

template <class T>
softmax_cross_entropy_loss<T>::softmax_cross_entropy_loss(std::size_t classes)
    : classes_(classes), gradient_(classes) {}

template <class T>
void softmax_cross_entropy_loss<T>::reserve(std::size_t max_batch) {
  gradient_.reserve(max_batch);
}

template <class T>
double softmax_cross_entropy_loss<T>::forward_sum(const_tensor<T> logits,
                                                 const std::int32_t* labels,
                                                 std::size_t batch_rows) {
  const char* who = "softmax_cross_entropy_loss";
  check_width(who, "logits", classes_, logits.cols);
  for (std::size_t i = 0; i < logits.rows; ++i) check_label(who, i, labels[i], classes_);
  logits_ = logits;
  labels_ = labels;
  batch_rows_ = batch_rows;
  const T inv_n = T(1) / static_cast<T>(batch_rows);
  return downpour::softmax_cross_entropy<T>(logits.data, labels, logits.rows, classes_, inv_n,
                                            nullptr);
}

// The built-in mlp's arithmetic: the sum in double over the float rows, then
// one division, so that the two agree bit for bit.
template <class T>
T softmax_cross_entropy_loss<T>::forward(const_tensor<T> logits, const std::int32_t* labels) {
  const double total = forward_sum(logits, labels, logits.rows);
  return static_cast<T>(total / static_cast<double>(logits.rows));
}

template <class T>
const_tensor<T> softmax_cross_entropy_loss<T>::backward() {
  const tensor<T> d = gradient_.rows(logits_.rows, "softmax_cross_entropy_loss");
  const T inv_n = T(1) / static_cast<T>(batch_rows_);
  downpour::softmax_cross_entropy<T>(logits_.data, labels_, logits_.rows, classes_, inv_n, d.data);
  return d;
}

template <class T>
sigmoid_cross_entropy_loss<T>::sigmoid_cross_entropy_loss(std::size_t width)
    : width_(width), label_targets_(width), gradient_(width) {}

template <class T>
void sigmoid_cross_entropy_loss<T>::reserve(std::size_t max_batch) {
  label_targets_.reserve(max_batch);
  gradient_.reserve(max_batch);
}

template <class T>
T sigmoid_cross_entropy_loss<T>::forward(const_tensor<T> logits, const_tensor<T> targets) {
  const char* who = "sigmoid_cross_entropy_loss";
  check_width(who, "logits", width_, logits.cols);
  check_same_shape(who, logits, targets);
  logits_ = logits;
  targets_ = targets;
  double total = 0.0;
  for (std::size_t i = 0; i < logits.size(); ++i) {
    const T x = logits.data[i];
    total += std::max(x, T(0)) - x * targets.data[i] + std::log1p(std::exp(-std::abs(x)));
  }
  return static_cast<T>(total / static_cast<double>(logits.size()));
}

template <class T>
T sigmoid_cross_entropy_loss<T>::forward(const_tensor<T> logits, const std::int32_t* labels) {
  const char* who = "sigmoid_cross_entropy_loss";
  check_width(who, "logits", 1, logits.cols);
  const tensor<T> targets = label_targets_.rows(logits.rows, who);
  for (std::size_t i = 0; i < logits.rows; ++i) {
    check_label(who, i, labels[i], 2);
    targets.data[i] = static_cast<T>(labels[i]);
  }
  return forward(logits, targets);
}

template <class T>
const_tensor<T> sigmoid_cross_entropy_loss<T>::backward() {
  const tensor<T> d = gradient_.rows(logits_.rows, "sigmoid_cross_entropy_loss");
  const T inv_n = T(1) / static_cast<T>(logits_.size());
  for (std::size_t i = 0; i < d.size(); ++i) {
    // exp of minus the magnitude only: never overflows.
    const T x = logits_.data[i], e = std::exp(-std::abs(x));
    const T p = x >= T(0) ? T(1) / (T(1) + e) : e / (T(1) + e);
    d.data[i] = (p - targets_.data[i]) * inv_n;
  }
  return d;
}

template <class T>
mean_squared_error_loss<T>::mean_squared_error_loss(std::size_t width)
    : width_(width), gradient_(width) {}

template <class T>
void mean_squared_error_loss<T>::reserve(std::size_t max_batch) {
  gradient_.reserve(max_batch);
}

template <class T>
T mean_squared_error_loss<T>::forward(const_tensor<T> predictions, const_tensor<T> targets) {
  const char* who = "mean_squared_error_loss";
  check_width(who, "predictions", width_, predictions.cols);
  check_same_shape(who, predictions, targets);
  predictions_ = predictions;
  targets_ = targets;
  double total = 0.0;
  for (std::size_t i = 0; i < predictions.size(); ++i) {
    const double r = static_cast<double>(predictions.data[i]) - targets.data[i];
    total += r * r;
  }
  return static_cast<T>(total / static_cast<double>(predictions.size()));
}

template <class T>
const_tensor<T> mean_squared_error_loss<T>::backward() {
  const tensor<T> d = gradient_.rows(predictions_.rows, "mean_squared_error_loss");
  const T scale = T(2) / static_cast<T>(predictions_.size());
  as_matrix(d) = scale * (as_matrix(predictions_) - as_matrix(targets_));
  return d;
}

template class softmax_cross_entropy_loss<float>;
template class softmax_cross_entropy_loss<double>;
template class sigmoid_cross_entropy_loss<float>;
template class sigmoid_cross_entropy_loss<double>;
template class mean_squared_error_loss<float>;
template class mean_squared_error_loss<double>;

}  // namespace downpour::layers
