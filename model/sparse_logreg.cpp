#include "model/sparse_logreg.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "model/sparse_hash.hpp"
#include "model/sparse_metrics.hpp"

namespace downpour {

sparse_logreg::sparse_logreg(std::uint64_t rows, std::uint64_t hash_seed)
    : rows_(rows), mixed_seed_(mix64(hash_seed)) {
  if (rows == 0) throw std::invalid_argument("sparse logistic regression: 0 rows");
}

std::uint64_t sparse_logreg::row_of(std::uint64_t feature) const {
  // The high half of hash * N: uniform in [0, N) without a division.
  return static_cast<std::uint64_t>(
      (static_cast<unsigned __int128>(mix64_premixed(mixed_seed_, feature)) * rows_) >> 64);
}

const std::vector<std::uint64_t>& logreg_batch::gather(const sparse_examples& set,
                                                       std::size_t begin, std::size_t end) {
  if (begin > end || end > set.size())
    throw std::invalid_argument("logreg batch: examples [" + std::to_string(begin) + ", " +
                                std::to_string(end) + ") of " + std::to_string(set.size()));
  set_ = &set;
  begin_ = begin;
  end_ = end;
  const std::uint64_t first = set.offsets[begin];
  const std::size_t features = static_cast<std::size_t>(set.offsets[end] - first);
  rows_.resize(features);
  for (std::size_t j = 0; j < features; ++j) rows_[j] = model_.row_of(set.keys[first + j]);
  // Sorting every feature's row (a radix sort, without a branch to
  // mispredict) puts repeats side by side: the unique rows are the keys.
  const key_sorter::sorted sorted = sorter_.sort(rows_);
  keys_.clear();
  unique_of_.resize(features);
  for (std::size_t i = 0; i < features; ++i) {
    if (keys_.empty() || keys_.back() != sorted.keys[i]) keys_.push_back(sorted.keys[i]);
    unique_of_[i] = static_cast<std::uint32_t>(keys_.size() - 1);
  }
  slots_.resize(features);
  for (std::size_t j = 0; j < features; ++j) slots_[j] = unique_of_[sorted.position[j]];
  return keys_;
}

const std::vector<float>& logreg_batch::logits(const float* weights, float bias) {
  if (!set_) throw std::logic_error("logreg batch: logits before gather");
  const sparse_examples& set = *set_;
  const std::uint64_t first = set.offsets[begin_];
  logits_.resize(end_ - begin_);
  for (std::size_t i = begin_; i < end_; ++i) {
    double z = bias;
    for (std::uint64_t j = set.offsets[i]; j < set.offsets[i + 1]; ++j)
      z += static_cast<double>(set.values[j]) * weights[slots_[j - first]];
    logits_[i - begin_] = static_cast<float>(z);
  }
  return logits_;
}

const logreg_gradient& logreg_batch::loss_and_gradient(const float* weights, float bias) {
  const std::vector<float>& z = logits(weights, bias);
  const sparse_examples& set = *set_;
  const std::uint64_t first = set.offsets[begin_];
  const double scale = 1.0 / static_cast<double>(std::max<std::size_t>(end_ - begin_, 1));
  gradient_.rows.assign(keys_.size(), 0.0f);
  double loss = 0.0;
  double bias_grad = 0.0;
  for (std::size_t i = begin_; i < end_; ++i) {
    const std::uint8_t y = set.labels[i];
    loss += logistic_loss(z[i - begin_], y);
    const double dz = (sigmoid(z[i - begin_]) - y) * scale;
    bias_grad += dz;
    for (std::uint64_t j = set.offsets[i]; j < set.offsets[i + 1]; ++j)
      gradient_.rows[slots_[j - first]] += static_cast<float>(dz * set.values[j]);
  }
  gradient_.loss = loss * scale;
  gradient_.bias = static_cast<float>(bias_grad);
  return gradient_;
}

}  // namespace downpour
