#include "actors/worker.hpp"

#include "actors/peer_guard.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "actors/buffers.hpp"
#include "actors/failure.hpp"
#include "data/batch_record.hpp"
#include "data/batcher.hpp"
#include "model/mlp.hpp"

namespace downpour {
namespace {

// A step needs the pulled parameters to compute and, in async/ssp, a ticket
// to push. The ticket is asked for right after the previous push (the
// supervisor counts on that order when a worker dies) but is only waited
// for before the push: its round trip overlaps the compute, and the
// parameters computed on are the same as if it had been waited for first.
struct worker_state {
  worker_config cfg;
  std::unique_ptr<mlp_workspace> workspace;
  std::unique_ptr<batcher> batches;
  std::unique_ptr<batch_record> record;  // only when the environment asks (tests)
  // The parameters computed on: the buffer the pull replies share when it
  // holds every shard's part at the model's own offsets (one shard with the
  // whole model; or in one process, every shard's last update written over
  // this worker's own gradient), no copy; else the parts copied into
  // `assembled`.
  std::shared_ptr<const floats> params;
  std::shared_ptr<floats> assembled;
  std::vector<shared_tensor> replies;  // this round's, per shard
  // Gradients and replayed parameters: one gradient buffer goes to every
  // shard (each owns its parts and writes its new parameters there), so a
  // step copies nothing; the worker writes a buffer again only once no one
  // else holds it.
  shared_buffer_pool buffers{6};
  std::shared_ptr<floats> grad;
  bool replays = false;                   // applies its own updates (see apply_own_update)
  std::optional<replay_offer> offer;      // the update applied into `replayed`, if any
  std::shared_ptr<floats> replayed;       // params with the worker's last push applied (offer)
  std::vector<std::int64_t> pulled_at;    // per shard: the step its slice was read at
  std::vector<std::int64_t> computed_at;  // pulled_at of the gradient's parameters (stamps)
  std::size_t pulls_pending = 0;          // pull replies still missing
  bool params_fresh = false;              // every pull is in and no gradient used them yet
  bool ticket_pending = false;            // async/ssp: the ticket asked for is not in yet
  bool grad_ready = false;                // a gradient waits for its ticket to be pushed
  std::int64_t ticket = -1;               // async/ssp: the global step this push makes; -1: stop
  std::int64_t min_step = 0;              // sync: the step the next pull must wait for
  std::size_t pushed_this_step = 0;       // sync: gradients pushed for pulled_at[0]
  std::int64_t local_step = 0;
  float grad_loss = 0.0f;  // the loss of the gradient not pushed yet
  float last_loss = 0.0f;  // the loss of the last pushed gradient
  peer_guard guard;  // exits and errors only from this node; nothing else served
  bool verdict_pending = false;  // a bad batch was reported: skip it or stop?
  bool leaving = false;          // told to stop: leave after the next push
  static inline const char* name = "worker";
};

using worker_pointer = worker_actor::stateful_pointer<worker_state>;

void advance(worker_pointer self);

// Done, told to stop, or the job ended early: the supervisor and the
// coordinator count this worker out (it holds no unused ticket: it pushes
// the step it holds first).
void leave_job(worker_pointer self, caf::error reason) {
  auto& st = self->state;
  self->send(st.cfg.supervisor, done_atom_v, st.cfg.index);
  self->send(st.cfg.coordinator, leave_atom_v, st.cfg.index);
  self->quit(std::move(reason));
}

void finish_job(worker_pointer self) {
  leave_job(self, caf::none);
}

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

// The supervisor is monitored: when it is gone, its down message (or, at
// the end of a job, the shards') says what to do, not the failed request.
void supervisor_failed(worker_pointer self, const char* what, const caf::error& err) {
  if (err == caf::sec::request_receiver_down) return;
  fail(self, what, err);
}

// A refused push is not fatal (the shard applied nothing); the worker goes
// on with fresh parameters and says why.
void warn_refused(worker_pointer self, std::size_t shard, const caf::error& err) {
  self->state.cfg.log.warn("ps " + std::to_string(shard) +
                           " refused a push: " + self->system().render(err));
}

// Only worth it between nodes: locally a pull reply shares a buffer, no copy.
// Not with bf16 on the wire: the shard applies the rounded gradient.
bool replays_own_updates(const worker_config& cfg, const caf::node_id& here) {
  if (cfg.mode == train_mode::sync || cfg.wire != wire_dtype::fp32) return false;
  return std::all_of(cfg.shards.begin(), cfg.shards.end(),
                     [&](const shard_actor& s) { return s->node() != here; });
}

bool uses_tickets(const worker_state& st) {
  return st.cfg.mode != train_mode::sync;
}

bool prefetches(const worker_state& st) {
  return st.cfg.pipeline && st.cfg.mode == train_mode::async;
}

// Sync: the global step a push is for. Shards may stand at different steps
// (each completes its rounds as its own gradients arrive); the lowest is
// the step every shard still needs.
std::int64_t sync_step(const worker_state& st) {
  return *std::min_element(st.pulled_at.begin(), st.pulled_at.end());
}

// Sync: over only when every shard is at the last step; a worker that quit
// when the first one got there could leave another a gradient short forever.
bool job_over(const worker_state& st) {
  if (!uses_tickets(st)) return sync_step(st) >= st.cfg.last_step;
  return !st.ticket_pending && st.ticket < 0;
}

const float* params_data(const worker_state& st) {
  return st.params->data();
}

// True if the reply's parts sit in a model-sized buffer at the shard's own
// offsets, so the buffer can be read as the model.
bool in_place(const shared_tensor& reply, const shard_layout& layout, std::size_t n) {
  if (!reply.buffer || reply.buffer->size() != n) return false;
  if (reply.parts.empty()) return covers_whole(layout, n);
  if (reply.parts.size() != layout.ranges.size()) return false;
  for (std::size_t i = 0; i < reply.parts.size(); ++i)
    if (reply.parts[i].offset != layout.ranges[i].offset ||
        reply.parts[i].size != layout.ranges[i].size)
      return false;
  return true;
}

// The buffer every reply shares in place, or nullptr.
std::shared_ptr<floats> common_buffer(const worker_state& st) {
  const std::size_t n = st.cfg.shape.size();
  for (std::size_t k = 0; k < st.replies.size(); ++k)
    if (st.replies[k].buffer != st.replies[0].buffer ||
        !in_place(st.replies[k], st.cfg.layouts[k], n))
      return nullptr;
  return st.replies[0].buffer;
}

// Every reply is in: read them in place if one buffer holds them all,
// else copy each shard's part into its ranges of `assembled`.
void settle_params(worker_state& st) {
  if (auto buffer = common_buffer(st)) {
    st.params = std::move(buffer);
  } else {
    if (!st.assembled) st.assembled = std::make_shared<floats>(st.cfg.shape.size());
    for (std::size_t k = 0; k < st.replies.size(); ++k) {
      const auto& part = st.replies[k];
      const float* p = part.contiguous();
      scatter(st.cfg.layouts[k], p ? p : part.values().data(), st.assembled->data());
    }
    st.params = st.assembled;
  }
  for (auto& r : st.replies) r = {};
}

// A reply either carries the shard's part or confirms that the worker's own
// update, applied into `replayed`, is all that changed there since its pull.
caf::error take_reply(worker_state& st, std::size_t k, pull_reply& r) {
  if (r.replayed) {
    if (!st.offer || r.step != st.offer->base + 1)
      return caf::make_error(errc::shape_mismatch, "a replay that was not offered");
    st.replies[k] = shared_tensor{st.replayed, st.cfg.layouts[k].ranges};
  } else if (r.params.size() != st.cfg.layouts[k].size()) {
    return caf::make_error(errc::shape_mismatch);
  } else {
    st.replies[k] = std::move(r.params);
  }
  st.pulled_at[k] = r.step;
  return caf::none;
}

template <class Pull>
void request_pulls(worker_pointer self, const Pull& pull) {
  auto& st = self->state;
  st.pulls_pending = st.cfg.shards.size();
  for (std::size_t k = 0; k < st.cfg.shards.size(); ++k)
    self->request(st.cfg.shards[k], caf::infinite, pull_atom_v, pull)
        .then(
            [=](pull_reply& r) {
              auto& s = self->state;
              if (auto err = take_reply(s, k, r)) return fail(self, "pull", err);
              if (--s.pulls_pending == 0) {
                settle_params(s);
                s.params_fresh = true;
                advance(self);
              }
            },
            [=](caf::error& err) { fail(self, "pull failed", err); });
}

// Async: a plain pull, or one that offers the update just applied.
void request_async_pulls(worker_pointer self) {
  if (auto& offer = self->state.offer) return request_pulls(self, *offer);
  request_pulls(self, std::int64_t{0});
}

void request_ticket(worker_pointer self) {
  auto& st = self->state;
  st.ticket_pending = true;
  self->request(st.cfg.supervisor, caf::infinite, ticket_atom_v, st.cfg.index, st.last_loss)
      .then(
          [=](std::int64_t ticket) {
            self->state.ticket = ticket;
            self->state.ticket_pending = false;
            advance(self);
          },
          [=](caf::error& err) { supervisor_failed(self, "ticket request failed", err); });
}

// After a push. Pipelined, this step's pulls are already out.
void begin_step(worker_pointer self) {
  auto& st = self->state;
  switch (st.cfg.mode) {
    case train_mode::sync:
      return request_pulls(self, st.min_step);
    case train_mode::ssp:
      self->request(st.cfg.coordinator, caf::infinite, clock_atom_v, st.cfg.index, st.local_step)
          .then(
              [=](std::int64_t) {
                request_ticket(self);
                request_async_pulls(self);
              },
              [=](caf::error& err) { fail(self, "ssp clock failed", err); });
      return;
    case train_mode::async:
      request_ticket(self);
      if (!prefetches(st)) request_async_pulls(self);
      return;
  }
}

// Every shard gets the whole gradient buffer and owns its own ranges of it.
shared_tensor outgoing_part(const worker_state& st, std::size_t k) {
  return shared_tensor{st.grad, st.cfg.layouts[k].ranges, st.cfg.wire};
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

// Between nodes (async/ssp, exact floats on the wire), a worker applies its
// gradient to the parameters it last pulled as the shard will (the same
// arithmetic, the learning rate of their step) and offers that with its next
// pull: when no other update came between, the shard answers without the
// parameters, sparing the transfer of the whole model. Pipelined, the
// parameters last pulled are the prefetched ones, not those computed on.
void apply_own_update(worker_state& st) {
  st.offer.reset();
  const auto base = st.pulled_at.front();
  for (auto step : st.pulled_at)
    if (step != base) return;
  const float lr = learning_rate_at(st.cfg.schedule, base);
  const std::size_t n = st.grad->size();
  st.replayed = st.buffers.take(n);
  sgd_to(st.replayed->data(), params_data(st), st.grad->data(), n, lr);
  st.offer = replay_offer{st.cfg.index, base, float_bits(lr)};
}

// The batcher still holds this gradient's batch: the next is drawn after the push.
void record_batch(worker_state& st) {
  const auto stamp = *std::min_element(st.computed_at.begin(), st.computed_at.end());
  if (st.record->write(stamp, st.batches->last_batch())) return;
  st.cfg.log.error("cannot write " + st.record->path() + "; no more batches recorded");
  st.record.reset();
}

void push_gradient(worker_pointer self) {
  auto& st = self->state;
  if (st.replays) apply_own_update(st);
  if (st.record) record_batch(st);
  for (std::size_t k = 0; k < st.cfg.shards.size(); ++k) {
    push_msg m{st.computed_at[k], st.cfg.index, outgoing_part(st, k)};
    self->request(st.cfg.shards[k], caf::infinite, push_atom_v, std::move(m))
        .then([](std::int64_t) {}, [=](caf::error& err) { warn_refused(self, k, err); });
  }
  st.grad_ready = false;
  st.last_loss = st.grad_loss;
  ++st.local_step;
  const bool sync = st.cfg.mode == train_mode::sync;
  if (sync) {
    self->send(st.cfg.supervisor, report_atom_v, st.cfg.index, sync_step(st) + 1, st.last_loss);
    advance_sync_barrier(st);
  }
  if (st.local_step % st.cfg.log_every == 0 && st.cfg.log.enabled(log_level::info)) {
    auto global = sync ? sync_step(st) + 1 : st.ticket + 1;
    st.cfg.log.info(step_log_line(global, st.local_step, st.last_loss));
  }
}

// A batch with a non-finite loss or gradient is never pushed: the supervisor
// either lets the worker skip it (--max-bad-batches), computing the next
// batch on the same parameters with the ticket it holds, or ends the job.
bool finite_batch(const worker_state& st) {
  return std::isfinite(st.grad_loss) && all_finite(st.grad->data(), st.grad->size());
}

void report_bad_batch(worker_pointer self) {
  auto& st = self->state;
  st.grad_ready = false;
  st.verdict_pending = true;
  const auto step = *std::min_element(st.computed_at.begin(), st.computed_at.end());
  self->request(st.cfg.supervisor, caf::infinite, diverged_atom_v, st.cfg.index, step,
                st.grad_loss)
      .then(
          [=](std::int64_t) {
            auto& s = self->state;
            s.verdict_pending = false;
            if (s.pulls_pending == 0) s.params_fresh = true;
            advance(self);
          },
          [=](caf::error& err) { supervisor_failed(self, "bad batch", err); });
}

// Computes once the parameters are in, pushes once the ticket is in too,
// then starts the next step; stops when the ticket (or, in sync mode, the
// pulled steps) say the job is over. Pipelined, the next pulls go out
// before the compute and are answered while it runs.
void advance(worker_pointer self) {
  auto& st = self->state;
  for (;;) {
    if (st.verdict_pending) return;
    if (!st.grad_ready && st.params_fresh) {
      if (job_over(st)) return finish_job(self);
      st.params_fresh = false;
      // A prefetch overwrites pulled_at before this gradient is pushed.
      st.computed_at = st.pulled_at;
      if (prefetches(st)) request_async_pulls(self);
      st.grad = st.buffers.take(st.cfg.shape.size());
      st.grad_loss = st.workspace->loss_and_gradient(params_data(st), st.batches->next_batch(),
                                                     st.grad->data());
      st.grad_ready = true;
    }
    if (!st.grad_ready || st.ticket_pending) return;
    // Pipelined replays apply the push to the prefetched parameters.
    if (st.replays && st.pulls_pending > 0) return;
    if (job_over(st)) return finish_job(self);
    if (!finite_batch(st)) return report_bad_batch(self);
    push_gradient(self);
    if (st.leaving) return leave_job(self, caf::make_error(errc::interrupted, "told to stop"));
    begin_step(self);
  }
}

void start(worker_pointer self) {
  auto& st = self->state;
  try {
    st.record = batch_record_from_environment(st.cfg.index);
  } catch (const data_error& e) {
    // Checked before the node started (check_batch_record_environment):
    // training goes on unrecorded rather than leave the job a worker short.
    st.cfg.log.error(std::string(e.what()) + "; no batches recorded");
  }
  self->send(st.cfg.coordinator, join_atom_v, st.cfg.index);
  if (st.cfg.mode != train_mode::async) return begin_step(self);
  request_ticket(self);
  request_pulls(self, std::int64_t{0});
}

worker_actor::behavior_type worker(worker_pointer self, worker_config cfg) {
  end_on_exception(self);
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.workspace = std::make_unique<mlp_workspace>(st.cfg.shape, st.cfg.batch_size, st.cfg.l2);
  st.batches = std::make_unique<batcher>(st.cfg.data, st.cfg.data->train, st.cfg.batch_size,
                                         st.cfg.batch_seed);
  st.pulled_at.assign(st.cfg.shards.size(), 0);
  st.computed_at = st.pulled_at;
  st.replies.assign(st.cfg.shards.size(), shared_tensor{});
  st.replays = replays_own_updates(st.cfg, self->node());
  st.guard.set_log(st.cfg.log);
  st.guard.install(self);
  // The chief ends its supervisor plainly at the end of a job; why the job
  // ended (stopped, diverged) comes with the shards' ends.
  const auto supervisor = caf::actor_cast<caf::actor_addr>(st.cfg.supervisor);
  self->set_down_handler([=](caf::down_msg& dm) {
    if (!from_source(self, dm)) return;
    if (dm.source == supervisor && dm.reason == caf::exit_reason::user_shutdown) return;
    fail(self, "a peer went down", dm.reason ? dm.reason : caf::make_error(errc::stopped));
  });
  for (auto& s : st.cfg.shards) self->monitor(s);
  self->monitor(st.cfg.supervisor);
  return {
      [=](start_atom) { start(self); },
      [=](stop_atom) { self->state.leaving = true; },
  };
}

}  // namespace

worker_actor spawn_worker(caf::actor_system& sys, worker_config cfg) {
  return sys.spawn(worker, std::move(cfg));
}

}  // namespace downpour
