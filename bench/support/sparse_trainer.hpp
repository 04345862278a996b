// The hashed logistic regression trained in one process: the reference a
// cluster of shards and workers is measured against. The weights live in a
// sparse_table exactly as a shard would hold them, the bias in a table of
// one row (the same optimizer), and every step pulls and pushes by key.
#pragma once

#include <cstddef>
#include <cstdint>

#include "data/libsvm.hpp"
#include "model/sparse_logreg.hpp"
#include "model/sparse_metrics.hpp"
#include "model/sparse_table.hpp"

namespace downpour {

struct logreg_settings {
  std::uint64_t rows = std::uint64_t{1} << 20;  // N
  std::uint64_t hash_seed = 0;
  std::size_t batch_size = 100;
  update_rule optimizer = update_rule::adagrad;
  float learning_rate = 0.1f;
};

class logreg_trainer {
 public:
  // Throws std::invalid_argument for 0 rows, a batch size of 0 or a learning
  // rate that is not a finite number above 0.
  explicit logreg_trainer(const logreg_settings& settings);

  // One step per batch_size examples of set, in order (the last batch may be
  // smaller). Throws std::runtime_error if a gradient is not finite (that
  // step is not applied).
  struct pass {
    double mean_loss = 0.0;  // of the batches, each before its step (progressive validation)
    std::size_t batches = 0;
    std::uint64_t rows = 0;  // pulled and then pushed, summed over the batches
  };
  pass train(const sparse_examples& set);

  binary_metrics evaluate(const sparse_examples& set);

  const sparse_table& weights() const { return weights_; }
  float bias() const;

 private:
  logreg_settings settings_;
  sparse_table weights_;
  sparse_table bias_;
  logreg_batch batch_;
};

}  // namespace downpour
