// Where the worker's modes differ (async, ssp, sync): pure rules over its
// state, apart from the phases in worker.cpp that apply them.
#include <algorithm>

#include "actors/worker_state.hpp"

namespace downpour {

// Pipelined: a dense model in async; with a row variable in ssp (admitted a
// step ahead, which --staleness 0 never allows). Async with a row variable
// sends its push and the next batch's pull in one message instead
// (exchanges): measured faster than a pull before the compute and a push
// after it, which cost a message more per step and shard than the compute
// of a batch hides (docs/sparse.md). Sync pulls wait at the shards for the
// step the push makes: nothing to prefetch.
bool prefetches(const worker_state& st) {
  if (!st.cfg.pipeline) return false;
  if (!has_rows(st.cfg)) return st.cfg.mode == train_mode::async;
  return st.cfg.mode == train_mode::ssp && st.cfg.staleness > 0;
}

bool prefetches_rows(const worker_state& st) {
  return has_rows(st.cfg) && prefetches(st);
}

// Async with rows: a push and the next pull go in one message (push_pull),
// as they would follow each other anyway. Ssp waits to be admitted between
// them (or has pulled ahead), sync pulls wait for the next step.
bool exchanges(const worker_state& st) {
  return st.cfg.mode == train_mode::async && has_rows(st.cfg);
}

// Sync: the global step a push is for. Shards may stand at different steps
// (each completes its rounds as its own gradients arrive); the lowest is
// the step every shard still needs.
std::int64_t sync_step(const worker_state& st) {
  return *std::min_element(st.pulled_at.begin(), st.pulled_at.end());
}

// Async/ssp: the ticket says so. Sync: only when every shard is at the last
// step; a worker that quit when the first one got there could leave another
// a gradient short forever.
bool job_over(const worker_state& st) {
  if (st.cfg.mode == train_mode::sync) return sync_step(st) >= st.cfg.last_step;
  return st.ticket && *st.ticket < 0;
}

// Async/ssp push only with a ticket. A pipelined worker that replays its own
// update applies it to the prefetched parameters, so it waits for them too.
bool may_push(const worker_state& st) {
  if (st.cfg.mode == train_mode::sync) return true;
  return st.ticket && !(st.replays && st.pulls_pending > 0);
}

// Sync: push again for the same step while this worker owes the round more
// gradients; otherwise wait for the next step, but never for one past the
// last: a shard that is done answers at the last step, so the worker keeps
// feeding the shards that are not done yet instead of waiting forever.
void advance_sync_barrier(worker_state& st) {
  st.pushed_this_step = st.pulled_at[0] == st.min_step ? st.pushed_this_step + 1 : 1;
  const std::int64_t next = st.pushed_this_step >= st.cfg.gradients_per_step ? 1 : 0;
  st.min_step = std::min(st.pulled_at[0] + next, st.cfg.last_step);
}

// The global step the push just sent makes.
std::int64_t pushed_step(const worker_state& st) {
  return st.cfg.mode == train_mode::sync ? sync_step(st) + 1 : *st.ticket + 1;
}

}  // namespace downpour
