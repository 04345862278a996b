#include "actors/worker.hpp"

#include <utility>

#include "data/batcher.hpp"
#include "model/mlp.hpp"
#include "runtime/buffers.hpp"
#include "runtime/job.hpp"

namespace downpour {
namespace {

struct worker_state {
  worker_config cfg;
  std::unique_ptr<mlp_workspace> workspace;
  std::unique_ptr<batcher> batches;
  std::vector<float> params;
  std::vector<float> grad;
  // Per shard: buffers for its pushes, recycled from its pull replies, so a
  // step allocates nothing. With one shard holding the whole model, replies
  // are swapped into params and the old params buffer becomes the next grad.
  std::vector<buffer_pool> outgoing;
  bool whole = false;  // one shard covers the whole model in order
  std::vector<std::int64_t> pulled_at;  // per shard: the step its slice was read at
  std::size_t pending = 0;              // replies still missing for this step
  std::int64_t ticket = -1;             // async/ssp: the global step this push makes; -1: stop
  std::int64_t min_step = 0;            // sync: the step the next pull must wait for
  std::size_t pushed_this_step = 0;     // sync: gradients pushed for pulled_at[0]
  std::int64_t local_step = 0;
  float last_loss = 0.0f;
  static inline const char* name = "worker";
};

using worker_pointer = worker_actor::stateful_pointer<worker_state>;

void begin_step(worker_pointer self);

void fail(worker_pointer self, const char* what, const caf::error& err) {
  aout(self) << "worker " << self->state.cfg.index << ": " << what << ": "
             << self->system().render(err) << std::endl;
  self->quit(err);
}

void finish_job(worker_pointer self) {
  auto& st = self->state;
  self->send(st.cfg.supervisor, done_atom_v, st.cfg.index);
  self->send(st.cfg.coordinator, leave_atom_v, st.cfg.index);
  self->quit();
}

// The push takes the gradient's storage (whole model) or a recycled buffer
// with the shard's part of it.
std::vector<float> outgoing_part(worker_state& st, std::size_t k) {
  auto& pool = st.outgoing[k];
  if (st.whole) return std::exchange(st.grad, pool.take(st.grad.size()));
  const auto& layout = st.cfg.layouts[k];
  auto part = pool.take(layout.size());
  gather_into(layout, st.grad.data(), part.data());
  return part;
}

void push_gradient(worker_pointer self) {
  auto& st = self->state;
  for (std::size_t k = 0; k < st.cfg.shards.size(); ++k) {
    push_msg m{st.pulled_at[k], st.cfg.index, tensor{outgoing_part(st, k)}};
    self->send(st.cfg.shards[k], push_atom_v, std::move(m));
  }
}

// A pulled part lands in params; its buffer is kept for a later push.
void take_pulled(worker_state& st, std::size_t k, std::vector<float>&& part) {
  if (st.whole) return st.outgoing[k].give(std::exchange(st.params, std::move(part)));
  scatter(st.cfg.layouts[k], part.data(), st.params.data());
  st.outgoing[k].give(std::move(part));
}

bool job_over(const worker_state& st) {
  if (st.cfg.mode == train_mode::sync) return st.pulled_at[0] >= st.cfg.last_step;
  return st.ticket < 0;
}

// Sync: push again for the same step while this worker owes the round more
// gradients; otherwise wait for the next step.
void advance_sync_barrier(worker_state& st) {
  st.pushed_this_step = st.pulled_at[0] == st.min_step ? st.pushed_this_step + 1 : 1;
  if (st.pushed_this_step >= st.cfg.gradients_per_step) st.min_step = st.pulled_at[0] + 1;
  else st.min_step = st.pulled_at[0];
}

void compute_and_push(worker_pointer self) {
  auto& st = self->state;
  st.last_loss =
      st.workspace->loss_and_gradient(st.params.data(), st.batches->next_batch(), st.grad.data());
  push_gradient(self);
  ++st.local_step;
  const bool sync = st.cfg.mode == train_mode::sync;
  if (sync) {
    self->send(st.cfg.supervisor, report_atom_v, st.cfg.index, st.pulled_at[0] + 1, st.last_loss);
    advance_sync_barrier(st);
  }
  if (st.local_step % st.cfg.log_every == 0) {
    auto global = sync ? st.pulled_at[0] + 1 : st.ticket + 1;
    aout(self) << step_log_line(global, st.local_step, st.last_loss) << std::endl;
  }
}

void request_pulls(worker_pointer self, std::int64_t min_step);
void request_ticket(worker_pointer self);

// All replies of the step are in: compute and push, or stop. Pipelined, the
// next pulls go out first and are answered while this step computes; the
// ticket is asked for after the push, so a worker holding a ticket has not
// pushed for it yet (the supervisor's rule when a worker dies).
void finish_step(worker_pointer self) {
  auto& st = self->state;
  if (job_over(st)) return finish_job(self);
  if (!st.cfg.pipeline || st.cfg.mode != train_mode::async) {
    compute_and_push(self);
    return begin_step(self);
  }
  st.pending = st.cfg.shards.size() + 1;
  request_pulls(self, 0);
  compute_and_push(self);
  request_ticket(self);
}

void on_reply(worker_pointer self) {
  if (--self->state.pending == 0) finish_step(self);
}

void request_pulls(worker_pointer self, std::int64_t min_step) {
  auto& st = self->state;
  for (std::size_t k = 0; k < st.cfg.shards.size(); ++k)
    self->request(st.cfg.shards[k], caf::infinite, pull_atom_v, min_step)
        .then([=](pull_reply& r) {
                auto& s = self->state;
                if (r.params.values.size() != s.cfg.layouts[k].size())
                  return fail(self, "pull", caf::make_error(errc::shape_mismatch));
                take_pulled(s, k, std::move(r.params.values));
                s.pulled_at[k] = r.step;
                on_reply(self);
              },
              [=](caf::error& err) { fail(self, "pull failed", err); });
}

void request_ticket(worker_pointer self) {
  auto& st = self->state;
  self->request(st.cfg.supervisor, caf::infinite, ticket_atom_v, st.cfg.index, st.last_loss)
      .then([=](std::int64_t ticket) {
              self->state.ticket = ticket;
              on_reply(self);
            },
            [=](caf::error& err) { fail(self, "ticket request failed", err); });
}

// Ticket and pulls go out together, so the ticket costs no extra latency.
void request_ticket_and_pulls(worker_pointer self) {
  self->state.pending = self->state.cfg.shards.size() + 1;
  request_ticket(self);
  request_pulls(self, 0);
}

void begin_step(worker_pointer self) {
  auto& st = self->state;
  switch (st.cfg.mode) {
    case train_mode::sync:
      st.pending = st.cfg.shards.size();
      return request_pulls(self, st.min_step);
    case train_mode::ssp:
      self->request(st.cfg.coordinator, caf::infinite, clock_atom_v, st.cfg.index, st.local_step)
          .then([=](std::int64_t) { request_ticket_and_pulls(self); },
                [=](caf::error& err) { fail(self, "ssp clock failed", err); });
      return;
    case train_mode::async:
      return request_ticket_and_pulls(self);
  }
}

worker_actor::behavior_type worker(worker_pointer self, worker_config cfg) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.workspace = std::make_unique<mlp_workspace>(st.cfg.shape, st.cfg.batch_size, st.cfg.l2);
  st.batches = std::make_unique<batcher>(st.cfg.data, st.cfg.data->train, st.cfg.batch_size,
                                         st.cfg.batch_seed);
  st.params.resize(st.cfg.shape.size());
  st.grad.resize(st.cfg.shape.size());
  st.pulled_at.assign(st.cfg.shards.size(), 0);
  st.outgoing.assign(st.cfg.shards.size(), buffer_pool{});
  st.whole = st.cfg.layouts.size() == 1 && covers_whole(st.cfg.layouts[0], st.params.size());
  self->set_down_handler([=](caf::down_msg& dm) {
    fail(self, "a peer went down", dm.reason ? dm.reason : caf::make_error(errc::stopped));
  });
  for (auto& s : st.cfg.shards) self->monitor(s);
  self->monitor(st.cfg.supervisor);
  return {
    [=](start_atom) {
      self->send(self->state.cfg.coordinator, join_atom_v, self->state.cfg.index);
      begin_step(self);
    },
  };
}

}  // namespace

worker_actor spawn_worker(caf::actor_system& sys, worker_config cfg) {
  return sys.spawn<caf::detached>(worker, std::move(cfg));
}

}  // namespace downpour
