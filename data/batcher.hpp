// next_batch with TensorFlow's read_data_sets semantics, deterministic from a seed.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "data/dataset.hpp"

namespace downpour {

// One batch: the examples' features (row-major size x input_size), labels as
// int32. From a sparse data set (dataset::sparse()) x is empty and the
// features are in compressed sparse rows: example r's are (keys, values)
// [offsets[r], offsets[r + 1]).
struct batch {
  std::size_t size = 0;
  std::size_t input_size = 0;
  std::vector<float> x;
  std::vector<std::int32_t> y;
  std::vector<std::uint32_t> examples;  // each row's index in the set (batch records)
  // Streamed batches (data/example_stream.hpp): each row's file and the
  // byte its line starts at, file << 40 | offset (batch records), instead
  // of `examples`.
  std::vector<std::uint64_t> origins;
  std::vector<std::uint64_t> offsets;   // sparse: size + 1 entries, offsets[0] == 0
  std::vector<std::uint64_t> keys;      // sparse: feature indices (libsvm: ascending per example)
  std::vector<float> values;
};

// Shuffles at the first call and at every epoch end; a batch that crosses the
// end takes the rest of the old epoch plus the start of the new permutation
// (contrib/learn/python/learn/datasets/mnist.py DataSet.next_batch).
// The returned batch is reused by the next call: no allocation per step.
class batcher {
 public:
  // Throws data_error for a batch size of 0 or larger than the set.
  batcher(std::shared_ptr<const dataset> set, std::size_t batch_size, std::uint64_t seed);
  const batch& next_batch();
  // The batch the last next_batch() returned.
  const batch& last_batch() const { return batch_; }
  std::size_t epochs_completed() const { return epochs_completed_; }

 private:
  void reshuffle();
  std::size_t draw_below(std::size_t bound);
  void copy_range(std::size_t first_position, std::size_t first_slot, std::size_t n);
  void copy_example(std::size_t example, std::size_t slot);

  std::shared_ptr<const dataset> set_;
  std::mt19937_64 rng_;
  std::vector<std::uint32_t> order_;
  std::size_t index_in_epoch_ = 0;
  std::size_t epochs_completed_ = 0;
  batch batch_;
};

}  // namespace downpour
