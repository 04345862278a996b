// Hashed-feature logistic regression: p(y = 1 | x) = sigmoid(b + sum_j x_j
// w[row(index_j)]), each feature index hashed into one of N rows of a sparse
// variable (d = 1), b a dense bias. Per batch it names the rows it touches,
// and from their pulled weights computes the loss and a gradient for those
// rows alone, so a worker never holds the N rows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "data/libsvm.hpp"
#include "model/key_sort.hpp"

namespace downpour {

class sparse_logreg {
 public:
  // Throws std::invalid_argument for 0 rows.
  sparse_logreg(std::uint64_t rows, std::uint64_t hash_seed);
  std::uint64_t rows() const { return rows_; }
  // The row feature index `feature` is hashed into, in [0, rows()).
  std::uint64_t row_of(std::uint64_t feature) const;

 private:
  std::uint64_t rows_;
  std::uint64_t mixed_seed_;  // mix64(hash seed)
};

// A batch's loss (mean log loss) and its gradient: one float per gathered
// row, in the gathered order, and one for the bias.
struct logreg_gradient {
  double loss = 0.0;
  std::vector<float> rows;
  float bias = 0.0f;
};

// The work of one batch, reused batch after batch by one thread: once its
// buffers have grown, a step allocates nothing. The references it returns
// stay valid until the next call.
class logreg_batch {
 public:
  explicit logreg_batch(const sparse_logreg& model) : model_(model) {}

  // The rows examples [begin, end) of set touch, ascending and unique: the
  // keys to pull. Remembers the batch (set must outlive the calls below).
  const std::vector<std::uint64_t>& gather(const sparse_examples& set, std::size_t begin,
                                           std::size_t end);

  // The batch's logits, given one weight per gathered key and the bias.
  const std::vector<float>& logits(const float* weights, float bias);

  const logreg_gradient& loss_and_gradient(const float* weights, float bias);

  // Per feature of the gathered batch (from its first): the position of its
  // row among the keys. Models with wider rows (fm) index their rows by it.
  const std::vector<std::uint32_t>& slots() const { return slots_; }
  // The keys the last gather returned.
  const std::vector<std::uint64_t>& keys() const { return keys_; }

 private:
  sparse_logreg model_;
  const sparse_examples* set_ = nullptr;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  std::vector<std::uint64_t> keys_;
  std::vector<std::uint32_t> slots_;  // per feature of the batch: its key's position
  // gather's scratch: each feature's row, and per sorted row, its key's position
  std::vector<std::uint64_t> rows_;
  std::vector<std::uint32_t> unique_of_;
  key_sorter sorter_;
  std::vector<float> logits_;
  logreg_gradient gradient_;
};

}  // namespace downpour
