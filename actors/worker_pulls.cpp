// A worker's pulls: the parameters (and the rows of a batch) of the step it
// computes next, each shard asked in parallel. Pipelined, the next step's
// pulls go out before the compute and are answered while it runs: a dense
// model's parameters in async; with a row variable, the next batch's rows
// (and the dense part) in ssp (docs/sparse.md, "Pipelined pulls").
#include <type_traits>

#include "actors/worker_state.hpp"

namespace downpour {
namespace {

template <class Message>
void request_pull(worker_pointer self, std::size_t k, Message msg) {
  self->request(self->state.cfg.shards[k], caf::infinite, pull_atom_v, std::move(msg))
      .then([=](pull_reply& r) { on_pull_reply(self, k, r); },
            [=](caf::error& err) { request_failed(self, "pull failed", err); });
}

// A model with a sparse variable names the rows of the batch being pulled
// in its pulls (and never offers a replay).
template <class Pull>
void request_pulls(worker_pointer self, const Pull& pull) {
  auto& st = self->state;
  st.pulls_pending = st.cfg.shards.size();
  if constexpr (std::is_same<Pull, std::int64_t>::value) {
    if (has_rows(st.cfg)) {
      cut_rows(st);
      for (std::size_t k = 0; k < st.cfg.shards.size(); ++k)
        request_pull(self, k, row_pull_for(st, k, pull));
      return;
    }
  }
  for (std::size_t k = 0; k < st.cfg.shards.size(); ++k) request_pull(self, k, pull);
}

// Ssp: the next batch's rows are read while the batch in hand is computed
// on, one step before the worker's clock says it finished that one: the
// coordinator admits the step they are for first (local_step + 1, as if
// this one were pushed), so every read keeps --staleness. Until then the
// pulls count as pending: the next step waits for them.
void prefetch_admitted_rows(worker_pointer self) {
  auto& st = self->state;
  st.pulls_pending = st.cfg.shards.size();
  self->request(st.cfg.coordinator, caf::infinite, clock_atom_v, st.cfg.index, st.local_step,
                st.local_step + 1)
      .then([=](std::int64_t) { request_pulls(self, std::int64_t{0}); },
            [=](caf::error& err) { request_failed(self, "ssp clock failed", err); });
}

}  // namespace

void pull_step(worker_pointer self, std::int64_t min_step) {
  request_pulls(self, min_step);
}

void request_async_pulls(worker_pointer self) {
  if (auto& offer = self->state.offer) return request_pulls(self, *offer);
  request_pulls(self, std::int64_t{0});
}

bool prefetch(worker_pointer self) {
  auto& st = self->state;
  if (!has_rows(st.cfg)) {
    request_async_pulls(self);
    return true;
  }
  // Asked again for the same step (a ticket after the job seemed over): its
  // next batch is out already, or there is none.
  if (st.prefetched || st.passes_done) return true;
  if (!draw_next(self)) return false;
  if (!st.prefetched) return true;  // no next batch: the one in hand is the last
  prefetch_admitted_rows(self);  // rows are prefetched in ssp only (prefetches)
  return true;
}

}  // namespace downpour
