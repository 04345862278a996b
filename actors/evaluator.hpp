// The evaluator on the chief: every eval_every global steps it takes a
// snapshot of every shard right after that step, evaluates the raw and the
// EMA parameters on the validation split, and reports to the supervisor
// (log line and metrics.csv). It runs detached: the forward passes never
// block the actors that serve training.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "protocol/messages.hpp"
#include "data/dataset.hpp"
#include "model/model.hpp"
#include "model/row_tables.hpp"

namespace downpour {

struct evaluator_config {
  std::vector<shard_actor> shards;
  std::shared_ptr<const model> net;
  std::size_t model_size = 0;  // floats in the model's layout
  row_tables_spec rows;  // the model's row variables' tables, if any
  std::shared_ptr<const dataset> validation;
  std::int64_t every = 0;
  std::int64_t last_step = 0;
  supervisor_actor supervisor;
};

// Starts by evaluating at the first multiple of every after start_step. A
// shard past that step skips it; a shard gone or failing ends the evaluator
// with its error. Os: detached in a job; the actor tests spawn it with
// caf::no_spawn_options, as CAF's deterministic scheduler cannot drive a
// detached actor's own thread.
template <caf::spawn_options Os = caf::detached>
evaluator_actor spawn_evaluator(caf::actor_system& sys, evaluator_config cfg,
                                std::int64_t start_step);

}  // namespace downpour
