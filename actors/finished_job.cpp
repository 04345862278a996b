#include "actors/finished_job.hpp"

#include <set>

#include "config/cluster_fingerprint.hpp"
#include "protocol/failure.hpp"
#include "protocol/peer_guard.hpp"

namespace downpour {
namespace {

struct finished_job_state {
  finished_job_config cfg;
  std::set<caf::node_id> greeted;
  nonce_book nonces;
  peer_guard guard;  // logs a refused hello, as the supervisor's does
  static inline const char* name = "finished_job";
};

using finished_pointer = supervisor_actor::stateful_pointer<finished_job_state>;

caf::error over(const finished_job_state& st) {
  return caf::make_error(errc::stopped, "the job completed before: " + st.cfg.final_line);
}

caf::result<std::int64_t, coordinator_actor> on_hello(finished_pointer self, const hello_msg& m) {
  auto& st = self->state;
  if (!hello_proven(self, m)) return unproven_hello();  // as the supervisor: the proof first
  if (auto diff = fingerprint_difference(m.fingerprint, st.cfg.fingerprint, "the chief")) {
    st.cfg.log.warn("refused a hello with other settings (" + *diff + ")");
    return caf::make_error(errc::config_mismatch, *diff);
  }
  if (auto sender = self->current_sender()) st.greeted.insert(sender->node());
  if (st.greeted.size() >= st.cfg.other_workers)
    self->send(self, stop_atom_v, std::string{"every worker was told"});
  return {st.cfg.last_step, coordinator_actor{}};
}

supervisor_actor::behavior_type finished_job(finished_pointer self, finished_job_config cfg) {
  end_on_exception(self);
  self->state.cfg = std::move(cfg);
  self->state.guard.set_log(self->state.cfg.log);
  if (self->state.cfg.other_workers == 0) self->send(self, stop_atom_v, std::string{"alone"});
  return {
      [=](challenge_atom) { return issue_nonce(self); },
      [=](hello_atom, const hello_msg& m) { return on_hello(self, m); },
      [=](join_atom, const hello_msg&) -> caf::result<std::uint32_t> { return over(self->state); },
      [=](ticket_atom, std::uint32_t, float) -> caf::result<std::int64_t> {
        return std::int64_t{-1};  // no ticket: the job is over
      },
      [=](lease_atom, std::uint32_t, float, std::int64_t,
          const ticket_tally&) -> caf::result<std::int64_t, std::int64_t> {
        return {std::int64_t{-1}, std::int64_t{0}};  // no lease: the job is over
      },
      [=](done_atom, std::uint32_t) {},
      [=](settle_atom, std::uint32_t, std::int64_t) {},
      [=](settle_atom, std::uint32_t, const ticket_tally&) {},
      [=](report_atom, std::uint32_t, std::int64_t, float) {},
      [=](end_atom) -> caf::result<std::int64_t, float, std::string> { return over(self->state); },
      // Only this node's own stop ends it: a signal ends the process anyway.
      [=](stop_atom, const std::string&) {
        auto sender = self->current_sender();
        if (sender && sender->node() == self->node()) self->quit();
      },
      [=](diverged_atom, std::uint32_t, std::int64_t, float) -> caf::result<std::int64_t> {
        return over(self->state);
      },
      [=](eval_atom, std::int64_t, double, double) {},
      [=](replica_atom) -> caf::result<std::vector<std::uint32_t>> { return over(self->state); },
      [=](status_atom) -> caf::result<std::string> { return over(self->state); },
      [=](restore_atom, recovery_plan&) -> caf::result<std::int64_t> { return over(self->state); },
      [=](filled_atom, std::uint64_t) {},
  };
}

}  // namespace

supervisor_actor spawn_finished_job(caf::actor_system& sys, finished_job_config cfg) {
  return sys.spawn(finished_job, std::move(cfg));
}

}  // namespace downpour
