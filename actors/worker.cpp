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
  std::size_t pending = 0;      // replies still missing for this step
  std::int64_t ticket = -1;     // global step this push makes, -1: stop
  std::int64_t pulled_at = 0;   // step stamp of the pulled parameters
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

void push_gradient(worker_pointer self) {
  auto& st = self->state;
  for (std::size_t k = 0; k < st.cfg.shards.size(); ++k) {
    push_msg m{st.pulled_at, st.cfg.index, tensor{gather(st.cfg.layouts[k], st.grad.data())}};
    self->send(st.cfg.shards[k], push_atom_v, std::move(m));
  }
}

// All replies of the step are in: compute and push, or stop.
void finish_step(worker_pointer self) {
  auto& st = self->state;
  if (st.ticket < 0) {
    self->send(st.cfg.supervisor, done_atom_v, st.cfg.index);
    self->quit();
    return;
  }
  st.last_loss =
      st.workspace->loss_and_gradient(st.params.data(), st.batches->next_batch(), st.grad.data());
  push_gradient(self);
  ++st.local_step;
  if (st.local_step % st.cfg.log_every == 0)
    aout(self) << step_log_line(st.ticket + 1, st.local_step, st.last_loss) << std::endl;
  begin_step(self);
}

void on_reply(worker_pointer self) {
  if (--self->state.pending == 0) finish_step(self);
}

// Ticket and pulls go out together, so the ticket costs no extra latency.
void begin_step(worker_pointer self) {
  auto& st = self->state;
  st.pending = st.cfg.shards.size() + 1;
  self->request(st.cfg.supervisor, caf::infinite, ticket_atom_v, st.cfg.index, st.last_loss)
      .then([=](std::int64_t ticket) {
              self->state.ticket = ticket;
              on_reply(self);
            },
            [=](caf::error& err) { fail(self, "ticket request failed", err); });
  for (std::size_t k = 0; k < st.cfg.shards.size(); ++k)
    self->request(st.cfg.shards[k], caf::infinite, pull_atom_v)
        .then([=](pull_reply& r) {
                auto& s = self->state;
                if (r.params.values.size() != s.cfg.layouts[k].size())
                  return fail(self, "pull", caf::make_error(errc::shape_mismatch));
                scatter(s.cfg.layouts[k], r.params.values.data(), s.params.data());
                if (k == 0) s.pulled_at = r.step;
                on_reply(self);
              },
              [=](caf::error& err) { fail(self, "pull failed", err); });
}

worker_actor::behavior_type worker(worker_pointer self, worker_config cfg) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.workspace = std::make_unique<mlp_workspace>(st.cfg.shape, st.cfg.batch_size, st.cfg.l2);
  st.batches = std::make_unique<batcher>(st.cfg.data, st.cfg.data->train, st.cfg.batch_size,
                                         st.cfg.batch_seed);
  st.params.resize(st.cfg.shape.size());
  st.grad.resize(st.cfg.shape.size());
  self->set_down_handler([=](caf::down_msg& dm) {
    fail(self, "a peer went down", dm.reason ? dm.reason : caf::make_error(errc::stopped));
  });
  for (auto& s : st.cfg.shards) self->monitor(s);
  self->monitor(st.cfg.supervisor);
  return {
    [=](start_atom) { begin_step(self); },
  };
}

}  // namespace

worker_actor spawn_worker(caf::actor_system& sys, worker_config cfg) {
  return sys.spawn<caf::detached>(worker, std::move(cfg));
}

}  // namespace downpour
