#include "actors/stop_supervisor.hpp"

#include <memory>
#include <set>

#include "runtime/cluster_config.hpp"

namespace downpour {

std::int64_t next_ticket(std::int64_t granted, std::int64_t last_step) {
  return granted < last_step ? granted : -1;
}

namespace {

struct stop_supervisor_state {
  supervisor_config cfg;
  std::int64_t granted = 0;  // tickets handed out, counted from step 0
  std::set<std::uint32_t> active;
  bool draining = false;
  std::int64_t final_step = -1;
  float last_loss = 0.0f;
  std::vector<caf::typed_response_promise<std::int64_t, float>> end_waiters;
  std::unique_ptr<progress_reporter> progress;
  static inline const char* name = "stop_supervisor";
};

using supervisor_pointer = supervisor_actor::stateful_pointer<stop_supervisor_state>;

void finish(supervisor_pointer self, std::int64_t step) {
  auto& st = self->state;
  st.final_step = step;
  st.progress->finish(step);
  for (auto& rp : st.end_waiters) rp.deliver(step, st.last_loss);
  st.end_waiters.clear();
}

// Every ticket is out and every worker said done: wait until every shard has
// applied every push (pushes and done travel on different paths).
void maybe_drain(supervisor_pointer self) {
  auto& st = self->state;
  if (st.draining || st.granted < st.cfg.last_step || !st.active.empty()) return;
  st.draining = true;
  auto remaining = std::make_shared<std::size_t>(st.cfg.shards.size());
  if (*remaining == 0) return finish(self, st.cfg.last_step);
  for (auto& shard : st.cfg.shards)
    self->request(shard, caf::infinite, await_atom_v, st.cfg.last_step)
        .then([=](std::int64_t) {
                if (--*remaining == 0) finish(self, self->state.cfg.last_step);
              },
              [=](caf::error& err) {
                aout(self) << "stop_supervisor: a shard failed while draining: "
                           << self->system().render(err) << std::endl;
                finish(self, -1);
              });
}

std::int64_t on_ticket(supervisor_pointer self, std::uint32_t worker, float loss) {
  auto& st = self->state;
  if (st.granted > st.cfg.start_step) st.last_loss = loss;  // a worker's first ask has none
  auto ticket = next_ticket(st.granted, st.cfg.last_step);
  if (ticket < 0) return -1;
  st.active.insert(worker);
  if (st.granted > st.cfg.start_step) st.progress->on_step(st.granted, loss);
  ++st.granted;
  return ticket;
}

caf::result<std::int64_t, float> on_end(supervisor_pointer self) {
  auto& st = self->state;
  if (st.final_step >= 0) return {st.final_step, st.last_loss};
  st.end_waiters.push_back(self->make_response_promise<std::int64_t, float>());
  maybe_drain(self);
  return st.end_waiters.back();
}

supervisor_actor::behavior_type stop_supervisor(supervisor_pointer self, supervisor_config cfg) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.granted = st.cfg.start_step;
  st.progress = std::make_unique<progress_reporter>(st.cfg.progress);
  return {
    [=](hello_atom, const std::string& fp) -> caf::result<std::int64_t> {
      if (auto diff = fingerprint_difference(fp, self->state.cfg.fingerprint, "the chief"))
        return caf::make_error(errc::config_mismatch, *diff);
      return self->state.granted;
    },
    [=](ticket_atom, std::uint32_t worker, float loss) { return on_ticket(self, worker, loss); },
    [=](done_atom, std::uint32_t worker) {
      self->state.active.erase(worker);
      maybe_drain(self);
    },
    [=](end_atom) { return on_end(self); },
  };
}

}  // namespace

supervisor_actor spawn_stop_supervisor(caf::actor_system& sys, supervisor_config cfg) {
  return sys.spawn(stop_supervisor, std::move(cfg));
}

}  // namespace downpour
