// The chief's part of a job, whatever the transport: check and initialise the
// shards, run the stop supervisor, wait for the last step, collect the model.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "actors/messages.hpp"
#include "config/options.hpp"
#include "data/idx.hpp"
#include "runtime/node/node.hpp"

namespace downpour {

// Starts the workers of the chief's process (again after a recovery, with
// the new shard handles) and returns them, so that the chief ends the job
// when one of them fails.
using start_workers_fn = std::function<caf::expected<std::vector<worker_actor>>(
    supervisor_actor, coordinator_actor, const std::vector<shard_actor>&)>;

// A stop request on stops (a signal) stops the job with a checkpoint.
caf::expected<job_result> run_chief(caf::actor_system& sys, const options& opts,
                                    std::shared_ptr<const mnist_data> data,
                                    std::vector<shard_actor> shards,
                                    const start_workers_fn& start_workers, stop_switch* stops);

// Says hello to shard k: this node's settings and the shard it takes it for
// (with its worker index; 0 is the chief). A shard serves a remote node
// nothing else before. The shard's refusal or a failure (no answer within
// timeout) is returned.
caf::error hello_shard(caf::scoped_actor& self, const options& opts, const shard_actor& shard,
                       std::size_t k, caf::timespan timeout);

// Says hello to every shard; the first mismatch or failure is returned.
caf::error check_peers(caf::actor_system& sys, const options& opts,
                       const std::vector<shard_actor>& shards);

}  // namespace downpour
