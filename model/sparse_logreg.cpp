#include "model/sparse_logreg.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "model/sparse_hash.hpp"
#include "model/sparse_metrics.hpp"

namespace downpour {
namespace {

// No row reaches it: rows are below N <= 2^64 - 1.
constexpr std::uint64_t kNoRow = ~std::uint64_t{0};

}  // namespace

sparse_logreg::sparse_logreg(std::uint64_t rows, std::uint64_t hash_seed)
    : rows_(rows), hash_seed_(hash_seed) {
  if (rows == 0) throw std::invalid_argument("sparse logistic regression: 0 rows");
}

std::uint64_t sparse_logreg::row_of(std::uint64_t feature) const {
  // The high half of hash * N: uniform in [0, N) without a division.
  return static_cast<std::uint64_t>(
      (static_cast<unsigned __int128>(mix64(hash_seed_, feature)) * rows_) >> 64);
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
  // Dedupe through a scratch hash, then sort only the unique rows: a batch
  // repeats its frequent features many times over.
  std::size_t mask = 15;
  while (mask < 2 * features) mask = 2 * mask + 1;
  const auto scratch_slot = [&](std::uint64_t row) {
    std::size_t at = mix64(row) & mask;
    while (scratch_rows_[at] != row && scratch_rows_[at] != kNoRow) at = (at + 1) & mask;
    return at;
  };
  scratch_rows_.assign(mask + 1, kNoRow);
  scratch_keys_.resize(mask + 1);
  keys_.clear();
  slots_.resize(features);
  for (std::size_t j = 0; j < features; ++j) {
    const std::uint64_t row = model_.row_of(set.keys[first + j]);
    const std::size_t at = scratch_slot(row);
    if (scratch_rows_[at] == kNoRow) {
      scratch_rows_[at] = row;
      keys_.push_back(row);
    }
    slots_[j] = static_cast<std::uint32_t>(at);  // the scratch slot, for now
  }
  std::sort(keys_.begin(), keys_.end());
  for (std::size_t i = 0; i < keys_.size(); ++i)
    scratch_keys_[scratch_slot(keys_[i])] = static_cast<std::uint32_t>(i);
  for (std::uint32_t& slot : slots_) slot = scratch_keys_[slot];
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
