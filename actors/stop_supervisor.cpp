// The stop supervisor's behavior: who may send what, and which part handles
// it (supervisor_tickets.cpp, supervisor_leases.cpp, supervisor_recovery.cpp,
// supervisor_status.cpp).
#include "actors/stop_supervisor.hpp"

#include "protocol/failure.hpp"
#include "actors/supervisor_state.hpp"

namespace downpour {
namespace {

void on_down(supervisor_pointer self, const caf::down_msg& dm) {
  if (!from_source(self, dm)) return;
  auto& shards = self->state.cfg.shards;
  for (std::size_t k = 0; k < shards.size(); ++k)
    if (caf::actor_cast<caf::actor_addr>(shards[k]) == dm.source) return on_shard_down(self, k);
  on_worker_down(self, dm);
}

void init(supervisor_pointer self, supervisor_config cfg) {
  auto& st = self->state;
  st.guard.set_log(cfg.log);
  st.cfg = std::move(cfg);
  st.granted = st.cfg.start_step;
  for (std::uint32_t k = 0; k < st.cfg.shards.size(); ++k) st.hosts.push_back(k);
  st.reported_step = st.cfg.start_step;
  st.progress_fed = st.cfg.start_step;
  st.progress = std::make_unique<progress_reporter>(st.cfg.progress);
  st.guard.install(self);
  self->set_down_handler([=](caf::down_msg& dm) { on_down(self, dm); });
  for (auto& s : st.cfg.shards) {
    self->monitor(s);
    st.guard.admit_member(s.node());  // a ps told to stop asks us (stop_atom, why)
    self->send(s, join_atom_v);
  }
}

using end_result = caf::result<std::int64_t, float, std::string>;

supervisor_actor::behavior_type stop_supervisor(supervisor_pointer self, supervisor_config cfg) {
  end_on_exception(self);
  init(self, std::move(cfg));
  // Workers (admitted by their hello) ask for tickets and report; status is
  // open; the rest comes from the chief's own actors (from_chief: this node).
  return {
      [=](challenge_atom) { return issue_nonce(self); },
      [=](hello_atom, const hello_msg& m) { return on_hello(self, m); },
      [=](join_atom, const hello_msg& m) { return on_join_request(self, m); },
      [=](ticket_atom, std::uint32_t worker, float loss) -> caf::result<std::int64_t> {
        if (!from_worker(self, "a ticket request", worker)) return unauthorized("ticket");
        return on_ticket(self, worker, loss);
      },
      [=](lease_atom, std::uint32_t worker, float loss, std::int64_t want,
          const ticket_tally& tally) -> caf::result<std::int64_t, std::int64_t> {
        if (!from_worker(self, "a lease request", worker)) return unauthorized("lease");
        return on_lease(self, worker, loss, want, tally);
      },
      [=](settle_atom, std::uint32_t worker, const ticket_tally& tally) {
        if (from_worker(self, "a settle", worker)) on_tally(self, tally);
      },
      [=](done_atom, std::uint32_t worker) {
        if (from_worker(self, "a done", worker)) on_done(self, worker);
      },
      [=](settle_atom, std::uint32_t worker, std::int64_t refused) {
        if (from_worker(self, "a settle", worker)) on_settle(self, refused);
      },
      [=](report_atom, std::uint32_t worker, std::int64_t step, float loss) {
        if (from_worker(self, "a report", worker)) on_report(self, step, loss);
      },
      [=](end_atom) -> end_result {
        if (!from_chief(self, "an end request")) return unauthorized("end");
        return on_end(self);
      },
      [=](stop_atom, const std::string& why) {
        if (from_member(self, "a stop request")) on_stop(self, why);
      },
      [=](diverged_atom, std::uint32_t worker, std::int64_t step,
          float loss) -> caf::result<std::int64_t> {
        if (!from_worker(self, "a bad batch report", worker)) return unauthorized("diverged");
        return on_bad_batch(self, worker, step, loss);
      },
      [=](eval_atom, std::int64_t step, double accuracy, double ema_accuracy) {
        if (from_chief(self, "an evaluation")) on_eval(self, step, accuracy, ema_accuracy);
      },
      // Open, as status is: a ps started again asks before its hello (catch_up).
      [=](replica_atom) { return self->state.hosts; },
      // Read-only, and `downpour status --chief=HOST:PORT` has no config to say hello with.
      [=](status_atom) { return on_status(self); },
      [=](restore_atom, recovery_plan& plan) -> caf::result<std::int64_t> {
        if (!from_chief(self, "a restore")) return unauthorized("restore");
        return on_restore(self, plan);
      },
      [=](filled_atom, std::uint64_t seq) { on_filled(self, seq); },
  };
}

}  // namespace

supervisor_actor spawn_stop_supervisor(caf::actor_system& sys, supervisor_config cfg) {
  return sys.spawn(stop_supervisor, std::move(cfg));
}

}  // namespace downpour
