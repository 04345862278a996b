// The row variables' part of a torch model's batch (model/torch/torch_model.hpp):
// each variable's features hashed into its rows, the keys a worker pulls over
// all of them, and the embedding_bag inputs of each over the pulled rows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/sparse_logreg.hpp"
#include "model/torch/torch_model.hpp"

namespace downpour {

// Reused batch after batch by one worker: once its buffers have grown, a
// batch allocates nothing but LibTorch's tensor headers.
class torch_lookups {
 public:
  // vars in the order of layout's row variables (their key ranges).
  torch_lookups(const std::vector<torch_row_variable>& vars, const model_layout& layout);
  torch_lookups(const torch_lookups&) = delete;
  torch_lookups& operator=(const torch_lookups&) = delete;

  bool empty() const { return tables_.empty(); }
  // The keys the batch touches, ascending and unique: each variable's rows
  // as keys of its range, the variables one after another. Remembers the
  // batch for the calls below. Throws std::invalid_argument for a batch
  // without sparse features.
  const std::vector<std::uint64_t>& gather(const batch& b);
  // The floats of the gathered keys' rows (each its variable's width).
  std::size_t values() const { return values_; }
  // The gathered batch's lookups, their rows views over `rows` (the values
  // of the gathered keys, in key order).
  const std::vector<torch_lookup>& lookups(const float* rows);
  // The same, autograd writing the rows' gradient into row_grad (zeroed
  // here; values() floats, in key order as the rows).
  const std::vector<torch_lookup>& lookups_with_gradient(const float* rows, float* row_grad);

 private:
  // One variable's hashing and its part of the batch.
  struct table {
    table(const torch_row_variable& var, std::uint64_t first_key, std::uint64_t hash_seed);
    void select(const batch& b);  // the example's features in the variable's range

    torch_row_variable var;
    std::uint64_t first_key;
    sparse_logreg hashing;
    logreg_batch gathered;
    sparse_examples selected;
    std::vector<std::int64_t> slots, offsets;  // embedding_bag's indices
    std::size_t first_value = 0;               // where its rows start in the pulled values
  };

  std::vector<table> tables_;
  std::vector<std::uint64_t> keys_;
  std::size_t values_ = 0;
  std::vector<torch_lookup> lookups_;
};

}  // namespace downpour
