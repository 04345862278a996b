#include "actors/worker.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <utility>

#include "config/durations.hpp"
#include "protocol/failure.hpp"
#include "actors/worker_state.hpp"
#include "model/update.hpp"

namespace downpour {

// ---- leaving the job --------------------------------------------------------

// Done, told to stop, or the job ended early: the supervisor and the
// coordinator count this worker out (it pushes the step it holds first;
// leased tickets it did not use go back). It leaves once every shard
// answered its pushes, so the supervisor knows which of them count
// (settle_push).
void leave_job(worker_pointer self, caf::error reason) {
  auto& st = self->state;
  if (!st.unsettled.empty()) {
    st.leave_reason = std::move(reason);
    return;
  }
  if (leases(st.cfg)) give_back(self);
  self->send(st.cfg.supervisor, done_atom_v, st.cfg.index);
  self->send(st.cfg.coordinator, leave_atom_v, st.cfg.index, st.last_round);
  self->quit(std::move(reason));
}

// A push still unanswered may yet be refused and give its ticket back: the
// worker stays until every push is answered (settle_push), then asks again.
void finish_job(worker_pointer self) {
  if (!self->state.unsettled.empty()) return;
  leave_job(self, caf::none);
}

namespace {

// Stopped or diverged: the chief says why; this worker just leaves with it.
// Anything else is a warning, not an error: the worker's exit reason goes to
// its node, which rejoins (a lost peer) or ends with that reason as its one
// ERROR line.
void fail(worker_pointer self, const char* what, const caf::error& err) {
  if (err == errc::interrupted || err == errc::diverged) return leave_job(self, err);
  self->state.cfg.log.warn("worker " + std::to_string(self->state.cfg.index) + " stops: " + what +
                           ": " + self->system().render(err));
  self->quit(err);
}

}  // namespace

// Shards and the supervisor are monitored: when one is gone, its down
// message (or, at the end of a job, the shards') says why, not the failed
// request, which may arrive first and knows only that the receiver is gone.
void request_failed(worker_pointer self, const char* what, const caf::error& err) {
  if (err == caf::sec::request_receiver_down) return;
  fail(self, what, err);
}

namespace {

// ---- the phases (worker.hpp draws them) -------------------------------------

void try_push(worker_pointer self);

void on_params(worker_pointer self) {
  switch (self->state.phase) {
    case worker_phase::pulling:
      return enter_pulling(self);
    case worker_phase::holding:
      return try_push(self);
    case worker_phase::admitting:
    case worker_phase::verdict:
      return;  // computed on once the phase is pulling again
  }
}

}  // namespace

void on_pull_reply(worker_pointer self, std::size_t k, pull_reply& r) {
  auto& st = self->state;
  auto err = take_reply(st, k, r);
  if (!err && has_rows(st.cfg)) err = take_rows(st, k, r);
  if (err) return fail(self, "pull", err);
  if (--st.pulls_pending > 0) return;
  settle_params(st);
  on_params(self);
}

// Asked right after the previous push (the supervisor counts on that order
// when a worker dies) but waited for only before the next push: its round
// trip overlaps the compute, and the parameters computed on are the same as
// if it had been waited for first.
void request_ticket(worker_pointer self) {
  auto& st = self->state;
  st.ticket.reset();
  if (leases(st.cfg)) return lease_ticket(self);
  self->request(st.cfg.supervisor, caf::infinite, ticket_atom_v, st.cfg.index, st.last_loss)
      .then([=](std::int64_t ticket) { ticket_in(self, ticket); },
            [=](caf::error& err) { request_failed(self, "ticket request failed", err); });
}

void ticket_in(worker_pointer self, std::int64_t ticket) {
  auto& st = self->state;
  st.ticket = ticket;
  if (st.phase == worker_phase::holding) try_push(self);
  // Asked again after the job seemed over: computes on (or leaves) now.
  else if (st.phase == worker_phase::pulling && st.pulls_pending == 0) enter_pulling(self);
}

namespace {

void begin_async_step(worker_pointer self) {
  if (!draw(self)) return;
  request_ticket(self);
  if (!prefetches(self->state)) request_async_pulls(self);  // else they are out already
  enter_pulling(self);
}

void begin_ssp_step(worker_pointer self) {
  auto& st = self->state;
  const bool admitted = st.prefetched;  // its pulls went out once the coordinator admitted it
  if (!draw(self)) return;
  if (admitted) {
    request_ticket(self);
    return enter_pulling(self);
  }
  st.phase = worker_phase::admitting;
  self->request(st.cfg.coordinator, caf::infinite, clock_atom_v, st.cfg.index, st.local_step)
      .then(
          [=](std::int64_t) {
            request_ticket(self);
            request_async_pulls(self);
            enter_pulling(self);
          },
          [=](caf::error& err) { fail(self, "ssp clock failed", err); });
}

// The pulls wait at the shards for the next global step: the token barrier.
void begin_sync_step(worker_pointer self) {
  if (!draw(self)) return;
  pull_step(self, self->state.min_step);
  enter_pulling(self);
}

void begin_step(worker_pointer self) {
  switch (self->state.cfg.mode) {
    case train_mode::async:
      return begin_async_step(self);
    case train_mode::ssp:
      return begin_ssp_step(self);
    case train_mode::sync:
      return begin_sync_step(self);
  }
}

}  // namespace

// pulling -> holding once every pull is in (at once if they are in already).
// Pipelined, the next pulls go out before the compute and are answered
// while it runs (worker_pulls.cpp).
void enter_pulling(worker_pointer self) {
  auto& st = self->state;
  st.phase = worker_phase::pulling;
  if (st.pulls_pending > 0 || st.leave_reason) return;  // leaving once its pushes are answered
  if (job_over(st)) return finish_job(self);
  // A prefetch overwrites pulled_at before this gradient is pushed.
  st.computed_at = st.pulled_at;
  if (prefetches(st) && !prefetch(self)) return;
  st.grad = st.buffers.take(st.cfg.model_size);
  const auto began = std::chrono::steady_clock::now();
  if (auto& b = in_hand(st); has_rows(st.cfg))
    st.grad_loss = b.workspace->loss_and_gradient(st.params->data(), b.rows.data(), *b.data,
                                                  st.grad->data(), b.row_grad.data());
  else
    st.grad_loss =
        st.workspace->loss_and_gradient(st.params->data(), *st.current, st.grad->data());
  meter_compute(st, seconds_since(began));
  st.phase = worker_phase::holding;
  try_push(self);
}

namespace {

// A batch with a non-finite loss or gradient is never pushed: the supervisor
// either lets the worker skip it (--max-bad-batches), computing the next
// batch on the same parameters with the ticket it holds, or ends the job.
bool finite_batch(const worker_state& st) {
  return std::isfinite(st.grad_loss) && all_finite(st.grad->data(), st.grad->size()) &&
         all_finite(in_hand(st).row_grad.data(), in_hand(st).row_grad.size());
}

// Skipping a bad batch: a dense model computes the next one on the same
// parameters; a sparse one must first pull the next batch's rows (unless
// they were prefetched).
void after_skip(worker_pointer self) {
  auto& st = self->state;
  const bool pulled = st.prefetched;
  if (!draw(self)) return;
  if (has_rows(st.cfg) && !pulled)
    pull_step(self, st.cfg.mode == train_mode::sync ? st.min_step : std::int64_t{0});
  enter_pulling(self);
}

// holding -> verdict -> pulling (skip) or the job's end.
void report_bad_batch(worker_pointer self) {
  auto& st = self->state;
  st.phase = worker_phase::verdict;
  const auto step = *std::min_element(st.computed_at.begin(), st.computed_at.end());
  self->request(st.cfg.supervisor, caf::infinite, diverged_atom_v, st.cfg.index, step, st.grad_loss)
      .then([=](std::int64_t) { after_skip(self); },
            [=](caf::error& err) { request_failed(self, "bad batch", err); });
}

// holding -> the next step (admitting or pulling), verdict, or the job's end.
void try_push(worker_pointer self) {
  auto& st = self->state;
  if (!may_push(st)) return;
  if (job_over(st)) return finish_job(self);
  if (!finite_batch(st)) return report_bad_batch(self);
  if (exchanges(st) && !st.leaving) return push_with_next_pull(self);
  push_gradient(self);
  if (st.leaving) return leave_job(self, caf::make_error(errc::interrupted, "told to stop"));
  begin_step(self);
}

void start(worker_pointer self) {
  auto& st = self->state;
  if (st.cfg.keeper) {  // pushes of trainers started before or elsewhere have other seqs
    std::random_device entropy;
    st.seq_base = (std::uint64_t{entropy()} << 32) ^ entropy();
  }
  try {
    st.record = batch_record_from_environment(st.cfg.index);
  } catch (const data_error& e) {
    // Checked before the node started (check_batch_record_environment):
    // training goes on unrecorded rather than leave the job a worker short.
    st.cfg.log.error(std::string(e.what()) + "; no batches recorded");
  }
  self->send(st.cfg.coordinator, join_atom_v, st.cfg.index);
  if (!st.cfg.stream) return begin_training(self);
  start_stream(self);
}

void watch_peers(worker_pointer self) {
  auto& st = self->state;
  // The chief ends its supervisor plainly at the end of a job; why the job
  // ended (stopped, diverged) comes with the shards' ends.
  const auto supervisor = caf::actor_cast<caf::actor_addr>(st.cfg.supervisor);
  self->set_down_handler([=](caf::down_msg& dm) {
    if (!from_source(self, dm)) return;
    if (dm.source == supervisor && dm.reason == caf::exit_reason::user_shutdown) return;
    // A push waits for every shard's answer, and a gone peer answers none:
    // waiting for those would keep this worker up after the job ended.
    leave_to_next_trainer(self);
    self->state.unsettled.clear();
    fail(self, "a peer went down", dm.reason ? dm.reason : caf::make_error(errc::stopped));
  });
  for (auto& s : st.cfg.shards) self->monitor(s);
  self->monitor(st.cfg.supervisor);
}

// A model with row variables computes each batch in the workspace that
// gathered its keys: one per batch the worker holds.
void make_workspaces(worker_state& st) {
  const std::size_t n = st.cfg.batch_size;
  if (!has_rows(st.cfg)) {
    st.workspace = st.cfg.net->workspace(n);
    return;
  }
  st.held[0].workspace = st.cfg.net->workspace(n);
  if (prefetches_rows(st)) st.held[1].workspace = st.cfg.net->workspace(n);
}

worker_actor::behavior_type worker(worker_pointer self, worker_config cfg) {
  end_on_exception(self);
  auto& st = self->state;
  st.cfg = std::move(cfg);
  make_workspaces(st);
  attach_meter(st, self->system());
  if (!st.cfg.stream && st.cfg.batches)
    st.source = st.cfg.batches;
  else if (!st.cfg.stream)
    st.source = std::make_shared<memory_batches>(st.cfg.train, st.cfg.batch_size, st.cfg.batch_seed);
  st.pulled_at.assign(st.cfg.shards.size(), 0);
  st.computed_at = st.pulled_at;
  st.replies.assign(st.cfg.shards.size(), shared_tensor{});
  st.replays = replays_own_updates(st.cfg, self->node());
  st.guard.set_log(st.cfg.log);
  st.guard.install(self);
  watch_peers(self);
  return {
      [=](start_atom) { start(self); },
      [=](stop_atom) { self->state.leaving = true; },
      [=](recall_atom) { on_recall(self); },
  };
}

}  // namespace

// The first step: async asks for its ticket and pulls at once.
void begin_training(worker_pointer self) {
  if (self->state.cfg.mode != train_mode::async) return begin_step(self);
  if (!draw(self)) return;
  request_ticket(self);
  pull_step(self, 0);
  enter_pulling(self);
}

worker_actor spawn_worker(caf::actor_system& sys, worker_config cfg) {
  return sys.spawn(worker, std::move(cfg));
}

}  // namespace downpour
