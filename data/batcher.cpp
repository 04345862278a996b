#include "data/batcher.hpp"

#include <limits>
#include <numeric>
#include <string>
#include <utility>

namespace downpour {

batcher::batcher(std::shared_ptr<const dataset> set, std::size_t batch_size, std::uint64_t seed)
    : set_(std::move(set)), rng_(seed) {
  const std::size_t count = set_->size();
  if (batch_size == 0) throw data_error("data: batch size must be at least 1");
  if (batch_size > count) {
    throw data_error("data: batch size " + std::to_string(batch_size) + " exceeds the " +
                     std::to_string(count) + " examples in the set");
  }
  if (count > std::numeric_limits<std::uint32_t>::max()) {
    throw data_error("data: " + std::to_string(count) + " examples are too many to index");
  }
  order_.resize(count);
  std::iota(order_.begin(), order_.end(), std::uint32_t{0});
  batch_.size = batch_size;
  batch_.input_size = set_->features();
  batch_.x.resize(batch_size * batch_.input_size);
  batch_.y.resize(batch_size);
  batch_.examples.resize(batch_size);
  if (set_->sparse()) batch_.offsets.assign(batch_size + 1, 0);
}

const batch& batcher::next_batch() {
  const std::size_t count = set_->size();
  const std::size_t start = index_in_epoch_;
  if (epochs_completed_ == 0 && start == 0) reshuffle();
  // clear() keeps the capacity: once the largest batch has been seen, a
  // sparse batch is refilled without allocating.
  batch_.keys.clear();
  batch_.values.clear();
  if (start + batch_.size > count) {
    // The batch straddles the epoch end: finish the old permutation, then
    // continue with a fresh one, exactly as TF does.
    const std::size_t rest = count - start;
    copy_range(start, 0, rest);
    ++epochs_completed_;
    reshuffle();
    index_in_epoch_ = batch_.size - rest;
    copy_range(0, rest, index_in_epoch_);
  } else {
    copy_range(start, 0, batch_.size);
    index_in_epoch_ = start + batch_.size;
  }
  return batch_;
}

// Fisher-Yates with our own bounded draw: std::shuffle and the standard
// distributions differ between library implementations, and runs must replay
// bit-for-bit from a seed on any toolchain.
void batcher::reshuffle() {
  for (std::size_t i = order_.size(); i > 1; --i) {
    std::swap(order_[i - 1], order_[draw_below(i)]);
  }
}

// Uniform in [0, bound) by rejection: discarding draws below 2^64 mod bound
// leaves a range that is an exact multiple of bound, so the modulo is unbiased.
std::size_t batcher::draw_below(std::size_t bound) {
  const std::uint64_t b = bound;
  const std::uint64_t threshold = (0 - b) % b;
  for (;;) {
    const std::uint64_t r = rng_();
    if (r >= threshold) return static_cast<std::size_t>(r % b);
  }
}

void batcher::copy_range(std::size_t first_position, std::size_t first_slot, std::size_t n) {
  for (std::size_t k = 0; k < n; ++k) copy_example(order_[first_position + k], first_slot + k);
}

// Slots are filled in order, so a sparse example's features append to the
// batch's CSR arrays.
void batcher::copy_example(std::size_t example, std::size_t slot) {
  if (set_->sparse()) {
    const dataset::sparse_row row = set_->sparse_features(example);
    batch_.keys.insert(batch_.keys.end(), row.keys, row.keys + row.count);
    batch_.values.insert(batch_.values.end(), row.values, row.values + row.count);
    batch_.offsets[slot + 1] = batch_.keys.size();
  } else {
    set_->copy_features(example, batch_.x.data() + slot * batch_.input_size);
  }
  batch_.y[slot] = set_->label(example);
  batch_.examples[slot] = static_cast<std::uint32_t>(example);
}

}  // namespace downpour
