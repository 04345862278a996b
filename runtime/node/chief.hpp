// The chief's part of a job, whatever the transport: check and initialise the
// shards, run the stop supervisor, wait for the last step, collect the model
// (its phases: actors/chief_phase.hpp).
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "protocol/messages.hpp"
#include "config/options.hpp"
#include "runtime/node/job.hpp"
#include "runtime/node/signals.hpp"

namespace downpour {

// Starts the workers of the chief's process (again after a recovery, with
// the new shard handles) and returns them, so that the chief ends the job
// when one of them fails.
using start_workers_fn = std::function<caf::expected<std::vector<worker_actor>>(
    supervisor_actor, coordinator_actor, const std::vector<shard_actor>&)>;

// A stop request on stops (a signal) stops the job with a checkpoint.
caf::expected<job_result> run_chief(caf::actor_system& sys, const options& opts,
                                    const job_model& job, std::vector<shard_actor> shards,
                                    const start_workers_fn& start_workers, stop_switch* stops);

}  // namespace downpour
