// A job started again after it completed (a pod or unit restarted, a second
// `make run`) is reported, not trained again: the chief logs the final line
// of the summary.json it wrote then and keeps that file and metrics.csv as
// they are; the other nodes learn from it that the job is over and exit 0
// at once. --fresh trains again (docs/operations.md).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "config/options.hpp"
#include "protocol/messages.hpp"
#include "runtime/node/job.hpp"

namespace downpour {

// The summary of the completed job in --checkpoint-dir, if it reached
// --last-step (a larger --last-step trains on); none with --fresh.
std::optional<run_summary> finished_before(const options& opts);

// The chief's part: checks the shards as any chief does, answers every
// worker's hello with the last step (bounded by --connect-timeout), then
// ends the shards. on_listening, if any, is told the port it listens at. The
// result says that summary.json is kept.
caf::expected<job_result> serve_finished(caf::actor_system& sys, const options& opts,
                                         const model_layout& layout,
                                         const std::vector<shard_actor>& shards, run_summary done,
                                         const std::function<void(std::uint16_t)>& on_listening);

// The result of a finished job with no other node to tell (--role=local).
job_result finished_result(run_summary done);

}  // namespace downpour
