// The stop supervisor's hellos and recovery epochs: a node joins with the
// cluster's fingerprint; a lost ps pauses the job (no tickets, hellos held,
// the chief's end request fails with `recovering`) until the chief has
// restored every shard, and the tickets restart from the restored step.
#include <algorithm>

#include "actors/supervisor_state.hpp"
#include "config/cluster_fingerprint.hpp"

namespace downpour {
namespace {

// The coordinator serves join, leave and clock only to nodes admitted here.
void admit(supervisor_pointer self, const caf::node_id& node, std::uint32_t worker) {
  auto& st = self->state;
  st.guard.admit_member(node);
  bind_trainers(st.guard, worker, st.cfg.trainers, node);
  self->send(st.cfg.coordinator, hello_atom_v, node);
}

}  // namespace

caf::result<std::int64_t, coordinator_actor> on_hello(supervisor_pointer self,
                                                      const hello_msg& m) {
  auto& s = self->state;
  const auto sender = self->current_sender();
  if (!hello_proven(self, m)) return unproven_hello();
  if (auto diff = fingerprint_difference(m.fingerprint, s.cfg.fingerprint, "the chief")) {
    s.guard.refuse("a hello with other settings", sender, " (" + *diff + ")");
    return caf::make_error(errc::config_mismatch, *diff);
  }
  // Worker 0 is the chief, this node: another node cannot join as it.
  if (sender && sender->node() != self->node() && m.worker == 0) {
    s.guard.refuse("a hello as worker 0 (the chief)", sender);
    return unauthorized("a hello as worker 0");
  }
  // Tasks past --worker-hosts belong to the nodes a join assigned them to.
  if (sender && !may_hello_as(self, m.worker, sender->node())) {
    s.guard.refuse("a hello as worker task " + std::to_string(m.worker) +
                       ", which is not in --worker-hosts and no join assigned to it",
                   sender);
    return unauthorized("a hello as worker task " + std::to_string(m.worker));
  }
  if (sender) admit(self, sender->node(), m.worker);
  if (!s.life.is(chief_phase::recovering)) return {counted_step(s), s.cfg.coordinator};
  s.held_hellos.push_back(self->make_response_promise<std::int64_t, coordinator_actor>());
  return s.held_hellos.back();
}

// A shard is gone: pause. The chief's end request fails with `recovering`,
// which sends it reconnecting and restoring; the workers go down with the
// shard and rejoin once the chief answers their hello again.
void on_shard_down(supervisor_pointer self, std::size_t k) {
  auto& st = self->state;
  if (walk_over(st)) return;  // the job is over: the chief stops the shards
  st.cfg.log.warn("stop_supervisor: ps " + std::to_string(k) +
                  " went down; training pauses until it is restored");
  if (st.life.is(chief_phase::recovering)) return;
  st.life.enter(chief_phase::recovering);
  if (!st.paused_since) st.paused_since = std::chrono::steady_clock::now();
  ++st.epoch;
  refuse_ticket_waiters(st, caf::make_error(errc::recovering, "ps " + std::to_string(k) + " went down"));
  for (auto& rp : st.end_waiters)
    rp.deliver(caf::make_error(errc::recovering, "ps " + std::to_string(k) + " went down"));
  st.end_waiters.clear();
}

namespace {

// A rollback loses the steps between the one reached and the restored one. A
// failover rolls nothing back: the applied steps are the ones it aligns the
// shards to, and the updates a lost primary had taken alone (plan.lost, within
// those steps) and the pushes owed until sent again count as lost.
void count_recovery(update_tally& tally, const recovery_plan& plan, std::int64_t settled,
                    std::int64_t reached) {
  if (plan.kind != recovery_kind::failover) return tally.record_rollback(reached, plan.step);
  tally.record_realigned(settled, plan.step);
  tally.record_lost(plan.lost);
  tally.record_owed(plan.owed);
}

}  // namespace

// Every shard stands at plan.step again: the tickets restart from there, so
// the job still ends at exactly last_step (or stops, if it was told to);
// the held hellos are answered.
caf::result<std::int64_t> on_restore(supervisor_pointer self, recovery_plan& plan) {
  auto& st = self->state;
  if (st.life.is(chief_phase::failed)) return st.failure;
  if (!st.life.is(chief_phase::recovering))
    return caf::make_error(caf::sec::unexpected_message, "a restore while no ps is lost");
  st.cfg.shards = std::move(plan.shards);
  st.cfg.coordinator = std::move(plan.coordinator);
  st.cfg.saver = std::move(plan.saver);
  if (!plan.hosts.empty()) st.hosts = std::move(plan.hosts);
  for (auto& s : st.cfg.shards) {
    self->monitor(s);
    self->send(s, join_atom_v);
  }
  for (auto& node : st.guard.members()) self->send(st.cfg.coordinator, hello_atom_v, node);
  // Answers of pushes every shard applied may come in after the loss: the
  // step reached is taken now, before the holders go.
  // A failover rolls nothing back: a sync round reported past its step was
  // completed by no shard, and is trained again.
  const auto reached =
      plan.kind == recovery_kind::failover ? plan.step : std::max(settled_step(st), plan.step);
  count_recovery(*st.cfg.tally, plan, settled_step(st), reached);
  st.granted = plan.step;
  st.reported_step = plan.step;
  st.progress_fed = plan.step;
  st.active.clear();
  st.finished.clear();  // the workers read on from the positions restored
  st.holders.clear();  // downs of old workers then match nothing
  st.life.enter(told_to_stop(st) ? chief_phase::stopping : chief_phase::training);
  ++st.epoch;
  const auto back = reached > plan.step
                        ? " (rolled back from global step " + std::to_string(reached) + ")"
                        : std::string{};
  st.cfg.log.info(std::string("stop_supervisor: ") +
                  (plan.kind == recovery_kind::failover ? "failed over to the backups"
                                                        : "every shard restored") +
                  "; training resumes at global step " + std::to_string(plan.step) + back);
  for (auto& rp : st.held_hellos) rp.deliver(st.granted, st.cfg.coordinator);
  st.held_hellos.clear();
  go_on(self);
  return plan.step;
}

// Only the job's shards fill what a failover made them owe.
void on_filled(supervisor_pointer self, std::uint64_t seq) {
  auto& st = self->state;
  const auto sender = caf::actor_cast<caf::actor_addr>(self->current_sender());
  const bool ours = std::any_of(st.cfg.shards.begin(), st.cfg.shards.end(),
                                [&](const shard_actor& s) { return s.address() == sender; });
  if (!ours) return st.guard.refuse("a filled push not from a shard of the job",
                                    self->current_sender());
  if (st.cfg.tally) st.cfg.tally->record_filled(seq);
}

}  // namespace downpour
