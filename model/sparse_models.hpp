// The built-in models of a sparse variable, on libsvm data: hashed-feature
// logistic regression (--model logreg) and a factorization machine
// (--model fm). Each feature index hashes into one of --sparse-rows rows of
// the variable "weights" (storage::rows); the bias is a dense 1x1 "bias".
// A worker pulls the rows a batch touches (touched_rows) and pushes one
// gradient row per key; the calls without rows cannot score and throw.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "data/batcher.hpp"
#include "data/libsvm.hpp"
#include "model/model.hpp"
#include "model/sparse_logreg.hpp"

namespace downpour {

// Fixed, not --seed: a row means the same features in every job, and the
// single-process trainer (bench/support/sparse_trainer.hpp) hashes alike.
inline constexpr std::uint64_t kFeatureHashSeed = 0;

// --model logreg: p(y = 1) = sigmoid(bias + sum_j x_j weights[row(j)]),
// weights N x 1 and bias zeros; scores [0, logit]; the loss is the mean log
// loss (no L2: a worker never holds the whole variable). N is
// choice.sparse_rows. Throws std::invalid_argument with one line for dense
// data, more than 2 classes, or 0 or more than 2^63 rows.
std::shared_ptr<const model> make_logreg(const model_choice& choice, const model_request& request);

// --model fm: logit = bias + sum_j x_j w[r_j] + sum_{j<l} x_j x_l <v[r_j], v[r_l]>,
// each row [w, v_1..v_k] (k = choice.fm_factors) drawn from a truncated normal of
// stddev 0.01; otherwise as logreg.
std::shared_ptr<const model> make_fm(const model_choice& choice, const model_request& request);

// Throws std::invalid_argument naming kind unless the request is for sparse
// data (no fixed features) of at most two classes.
void check_sparse_request(const std::string& kind, const model_request& request);

// A batch's features as sparse_examples, gathered into the rows they hash
// into. A batch whose features are those of the last one is not gathered
// again: a worker asks for its rows, then for its loss with them.
class hashed_batch {
 public:
  explicit hashed_batch(const sparse_logreg& hashing) : batch_(hashing) {}
  // Throws std::invalid_argument for a batch without sparse rows or a
  // label other than 0 and 1.
  logreg_batch& load(const batch& b);
  const sparse_examples& examples() const { return csr_; }

 private:
  sparse_examples csr_;
  logreg_batch batch_;
  std::size_t gathered_size_ = 0;
  bool gathered_ = false;
};

}  // namespace downpour
