// The chief's helpers: the sync coordinator, the checkpoint saver and the
// evaluator. They hold shard handles, so after a ps came back they are
// replaced by fresh ones (the supervisor, published, stays and is told).
#pragma once

#include <cstdint>
#include <vector>

#include "config/options.hpp"
#include "protocol/messages.hpp"
#include "runtime/node/job.hpp"
#include "runtime/node/job_watch.hpp"
#include "runtime/node/local_ends.hpp"

namespace downpour {

struct chief_helpers {
  coordinator_actor coordinator;
  saver_actor saver;
  evaluator_actor evaluator;  // null without --eval-every or a validation split
};

// The coordinator and the saver on shards, from step.
chief_helpers spawn_helpers(caf::actor_system& sys, const options& opts, const model_layout& layout,
                            const std::vector<shard_actor>& shards, std::int64_t step);

// The evaluator, reporting to the supervisor; null when there is nothing to evaluate.
evaluator_actor spawn_evaluator_for(caf::actor_system& sys, const options& opts,
                                    const job_model& job, const std::vector<shard_actor>& shards,
                                    const supervisor_actor& supervisor, std::int64_t step);

void watch_helpers(job_watch& watch, const chief_helpers& h);

// From self: an actor obeys exits only from a known sender of its own node.
void stop_helpers(caf::scoped_actor& self, const chief_helpers& h);

// Everything the chief started on its node, for the bounded wait at the end.
std::vector<named_actor> started_here(const supervisor_actor& supervisor, const chief_helpers& h,
                                      const std::vector<worker_actor>& workers);

}  // namespace downpour
