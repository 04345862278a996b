// The rules of synchronous and stale-synchronous training as pure functions,
// so they can be tested without actors. See ../shared/notes/tf-semantics.md
// (SyncReplicasOptimizer, ConditionalAccumulator).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

namespace downpour {

enum class stamp_verdict {
  fresh,   // stamped with the current global step: accumulate
  stale,   // older than the current step: dropped and counted, never applied
  future,  // newer than any step handed out: a broken or hostile peer
};

// ConditionalAccumulator::TryApplyGrad accepts a gradient only if its local
// step is not older than the accumulator's global step.
stamp_verdict judge_stamp(std::int64_t stamp, std::int64_t global_step);

// Gradients one worker contributes per global step: more than one only when
// fewer workers than replicas_to_aggregate exist (TF's "several batches per
// update"); the count is of gradients, not of workers.
std::size_t gradients_per_worker(std::size_t replicas_to_aggregate, std::size_t workers);

// How many fresh gradients complete a round: replicas_to_aggregate, lowered
// to what the live workers can deliver so a dead worker never hangs the job
// (TensorFlow issue 5022); never below one.
std::size_t required_gradients(std::size_t replicas_to_aggregate, std::size_t workers,
                               std::size_t live_workers);

// SSP: may a worker that has finished `clock` steps start another, given the
// clocks of the live workers? No worker runs more than staleness steps ahead
// of the slowest live one; staleness 0 is lock-step.
bool may_advance(std::int64_t clock, const std::map<std::uint32_t, std::int64_t>& live_clocks,
                 std::int64_t staleness);

}  // namespace downpour
