// A model with row variables (dlrm, wide_deep; model/ctr_models.hpp)
// trained in one process by one worker: the dense variables in one flat
// buffer, the row variables in row_tables as the shards hold them, every
// step pulling the batch's rows by key and pushing their gradient. Every
// variable is updated by its own declared rule (model/row_update.hpp), the
// dense ones too (wide_deep's deep MLP is AdaGrad), at a fixed learning rate.
// What bench_ctr times against PyTorch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/batcher.hpp"
#include "model/model.hpp"
#include "model/row_tables.hpp"
#include "model/sparse_metrics.hpp"

namespace downpour {

struct ctr_trainer_settings {
  std::size_t batch_size = 128;  // the largest batch step() takes
  float learning_rate = 0.1f;    // of the variables whose rule has none of its own
  std::uint64_t seed = 1;        // of the initial values, dense and rows
};

class ctr_trainer {
 public:
  // Throws std::invalid_argument for a model without row variables, a batch
  // size of 0 or a learning rate that is not a finite number above 0.
  ctr_trainer(std::shared_ptr<const model> net, const ctr_trainer_settings& settings);

  // One step on b (at most batch_size examples); its loss before the step.
  // Throws std::runtime_error if the rows' gradient is refused (not finite).
  float step(const batch& b);

  // The test batches' log loss and AUC (their labels 0 or 1).
  binary_metrics evaluate(const std::vector<batch>& test);

  const row_tables& rows() const { return rows_; }
  std::int64_t steps() const { return step_; }

 private:
  void update_dense();

  std::shared_ptr<const model> net_;
  ctr_trainer_settings settings_;
  model_layout layout_;
  std::unique_ptr<model_workspace> workspace_;
  std::vector<float> params_, grad_, dense_slots_;
  std::vector<std::size_t> slot_offsets_;  // each dense variable's first slot
  row_tables rows_;
  keyed_rows row_grad_;
  std::int64_t step_ = 0;
};

// The examples of the files spec names (as --train-file does: paths and
// patterns, comma-separated), Criteo lines, in file order, passes times over,
// in batches of batch_size (a pass ends with a smaller one if they do not
// fill the last). Throws data_error.
std::vector<batch> criteo_batches(const std::string& spec, std::size_t batch_size,
                                  std::uint64_t passes);

}  // namespace downpour
