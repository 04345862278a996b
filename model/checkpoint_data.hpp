// What a checkpoint holds, as the checkpoint saver assembles it from the
// shards' snapshots; runtime/files/checkpoint.hpp reads and writes it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "data/read_position.hpp"
#include "model/layout.hpp"
#include "model/sparse_table.hpp"

namespace downpour {

// Everything a checkpoint holds.
struct checkpoint {
  model_layout layout;
  std::int64_t global_step = 0;
  std::string mode = "async";  // "async", "sync" or "ssp"
  double wall_time = 0.0;      // unix seconds when saved
  std::vector<float> params;   // layout.size() floats, the flat buffer
  std::vector<float> ema;      // layout.size() floats, the moving averages
  row_dump rows;               // the sparse variable's rows held, if the model has one
  // Streamed input: where each worker's reading stood (none for input in memory).
  std::vector<worker_position> positions;
  // The dense variables' optimizer slots (model/dense_rules.hpp,
  // whole_slot_count); empty: none kept, they start at their initial value.
  std::vector<float> slots;
};

// Writes a checkpoint and returns the path written; throws std::runtime_error
// (runtime/files: save_checkpoint into the checkpoint dir, keeping the newest).
using checkpoint_writer = std::function<std::string(const checkpoint&)>;

}  // namespace downpour
