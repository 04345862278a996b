// Putting a model into the shards: at the start of a job (newest checkpoint
// or fresh parameters) and after a lost ps came back (the chief reconnects,
// then every shard rolls back to the same checkpoint so the model stays
// consistent).
#pragma once

#include <cstdint>
#include <vector>

#include "reporting/log.hpp"
#include "protocol/messages.hpp"
#include "config/options.hpp"
#include "model/layout.hpp"
#include "model/sparse_table.hpp"

namespace downpour {

// Where training starts: the newest valid checkpoint, or fresh parameters.
struct start_state {
  std::int64_t step = 0;
  std::vector<float> params;
  std::vector<float> ema;
  row_dump rows;  // the sparse variable's rows held (a restore)
  bool restored = false;
  std::vector<worker_position> positions;  // streamed input: where each worker stood
  std::vector<float> slots;  // the dense variables' slots (a restore); empty: initial
};

// Logs "checkpoint: restored PATH at global step S" when a checkpoint is used.
// A checkpoint of another model is refused (checkpoint_error, one line naming both).
start_state restore_or_init(const options& opts, const model_layout& layout, const logger& log);

// Overwrites every shard with start (live shards of an earlier chief too)
// and returns the global step they now stand at, which must agree.
caf::expected<std::int64_t> restore_shards(caf::actor_system& sys, const options& opts,
                                           const model_layout& layout, const start_state& start,
                                           const std::vector<shard_actor>& shards);

// After a ps went down: the shard handles, dead ones replaced by fresh ones.
struct recovered_cluster {
  std::vector<shard_actor> shards;
  std::int64_t step = 0;
};

// Reconnects every lost ps (waiting up to --connect-timeout for it to be
// started again), then restores every shard from the newest checkpoint.
// Fails naming the ps that did not come back.
caf::expected<recovered_cluster> recover_cluster(caf::actor_system& sys, const options& opts,
                                                 const model_layout& layout,
                                                 std::vector<shard_actor> shards);

}  // namespace downpour
