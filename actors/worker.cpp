#include "actors/worker.hpp"

#include "data/batcher.hpp"
#include "model/mlp.hpp"
#include "runtime/job.hpp"

namespace downpour {
namespace {

struct worker_state {
  worker_config cfg;
  std::unique_ptr<mlp_workspace> workspace;
  std::unique_ptr<batcher> batches;
  std::vector<float> params;
  std::vector<float> grad;
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

void push_gradient(worker_pointer self) {
  auto& st = self->state;
  for (std::size_t k = 0; k < st.cfg.shards.size(); ++k) {
    push_msg m{st.pulled_at[k], st.cfg.index, tensor{gather(st.cfg.layouts[k], st.grad.data())}};
    self->send(st.cfg.shards[k], push_atom_v, std::move(m));
  }
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

// All replies of the step are in: compute and push, or stop.
void finish_step(worker_pointer self) {
  auto& st = self->state;
  if (job_over(st)) return finish_job(self);
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
  begin_step(self);
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
                scatter(s.cfg.layouts[k], r.params.values.data(), s.params.data());
                s.pulled_at[k] = r.step;
                on_reply(self);
              },
              [=](caf::error& err) { fail(self, "pull failed", err); });
}

// Ticket and pulls go out together, so the ticket costs no extra latency.
void request_ticket_and_pulls(worker_pointer self) {
  auto& st = self->state;
  st.pending = st.cfg.shards.size() + 1;
  self->request(st.cfg.supervisor, caf::infinite, ticket_atom_v, st.cfg.index, st.last_loss)
      .then([=](std::int64_t ticket) {
              self->state.ticket = ticket;
              on_reply(self);
            },
            [=](caf::error& err) { fail(self, "ticket request failed", err); });
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
