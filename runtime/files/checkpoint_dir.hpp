// The chief's checkpoint directory at the start of a job, before any node is
// told anything: it must be writable, and a directory whose checkpoints are
// all damaged is not silently trained over from step 0 (docs/checkpoints.md).
#pragma once

#include "reporting/log.hpp"
#include "config/options.hpp"

namespace downpour {

// Creates --checkpoint-dir and checks that files can be written there; with
// --fresh moves an earlier run's files (checkpoints, index, metrics.csv,
// summary.json) into DIR/before-fresh-TIME/ and logs where; without it
// refuses a directory whose checkpoints all fail to read, naming them.
// Throws checkpoint_error, one line.
void prepare_checkpoint_dir(const options& opts, const logger& log);

}  // namespace downpour
