// A shard's part in a failover across processes (--ps-replicas 2,
// docs/failure-model.md): a ps keeps a backup of its neighbour's shard,
// which joins that primary here; when a ps dies the chief promotes the
// backup of its shard (on_replica_set), fences every shard against pushes
// of the workers of the lost epoch, and brings them all to one step.
#include <algorithm>
#include <string>
#include <utility>

#include "actors/shard_state.hpp"

namespace downpour {
namespace {

std::string me(const parameter_shard_state& st) {
  return "parameter_shard " + std::to_string(st.cfg.index);
}

bool listed(const std::vector<caf::actor_addr>& v, const caf::actor_addr& a) {
  return std::find(v.begin(), v.end(), a) != v.end();
}

}  // namespace

// Only a ps that said hello as a replica may attach a backup, and only one
// on its own node: no member can make a shard copy its state elsewhere.
caf::result<std::int64_t> on_backup_join(shard_pointer self, caf::actor& backup) {
  auto& st = self->state;
  const auto sender = self->current_sender();
  if (!sender || !backup || st.replica_nodes.count(sender->node()) == 0 ||
      backup.node() != sender->node()) {
    st.guard.refuse("a backup from a node that is no replica of it", sender);
    return unauthorized("backup join");
  }
  auto b = caf::actor_cast<shard_actor>(backup);
  // One backup per node: a ps started again replaces its lost one.
  st.backups.erase(std::remove_if(st.backups.begin(), st.backups.end(),
                                  [&](const shard_actor& x) { return x.node() == b.node(); }),
                   st.backups.end());
  self->monitor(b);
  st.backups.push_back(std::move(b));
  send_state_to_backups(self);
  st.cfg.log.info(me(st) + ": a backup on another ps joined at global step " +
                  std::to_string(st.step));
  return st.step;
}

// A ps started again after a failover serves as its own shard's backup
// (catch_up): then it is the copy of shard k it names.
caf::result<caf::actor> on_copy_lookup(shard_pointer self, std::uint32_t k) {
  auto& st = self->state;
  if (k == st.cfg.index && st.primary) return caf::actor_cast<caf::actor>(self);
  auto it = st.cfg.hosted.find(k);
  if (it == st.cfg.hosted.end())
    return caf::make_error(errc::no_copy, "ps " + std::to_string(st.cfg.index) +
                                              " keeps no copy of shard " + std::to_string(k));
  return it->second;
}

void on_stop(shard_pointer self) {
  auto& st = self->state;
  const auto sender = self->current_sender();
  const bool from_primary = st.primary && sender == caf::actor_cast<caf::strong_actor_ptr>(st.primary);
  if (!from_primary && !from_chief(self, "a stop")) return;
  if (st.backups.empty()) return self->quit();
  // This ps may exit once its shards are gone, and what it sent last with
  // it: the shard waits for its backups' ends (on_down) before its own.
  st.stopping = true;
  for (const auto& b : st.backups) self->send(b, stop_atom_v);
}

// Tracked with replicas only: R = 1 pays nothing per push. A backup takes
// pushes only from its primary: a worker's is of an epoch that still took
// this copy for the primary (a ps retired after a hang, rejoin_after_hang).
bool may_push(shard_pointer self) {
  auto& st = self->state;
  if (st.cfg.replicas <= 1) return true;
  if (st.primary || st.orphaned) return false;
  const auto from = caf::actor_cast<caf::actor_addr>(self->current_sender());
  if (listed(st.fenced, from)) return false;
  if (!listed(st.pushers, from)) st.pushers.push_back(from);
  return true;
}

// With replicas the chief is watched: a ps that lost it may have been
// failed over (rejoin_after_hang), so its copy waits for the chief's word.
void on_chief_join(shard_pointer self) {
  auto& st = self->state;
  st.chief = self->current_sender();
  st.orphaned = false;
  if (st.cfg.replicas > 1 && st.chief && st.chief->node() != self->node())
    self->monitor(caf::actor_cast<caf::actor>(st.chief));
}

caf::error fenced_push() {
  return caf::make_error(errc::fenced, "a push from a worker of the epoch before a failover");
}

// A push already on its way from a worker of the lost epoch lands here
// after the fence or not at all, so the step answered counts it or never will.
caf::result<fence_report> on_failover_fence(shard_pointer self) {
  auto& st = self->state;
  st.fenced.insert(st.fenced.end(), st.pushers.begin(), st.pushers.end());
  st.pushers.clear();
  st.fenced_round.reset();
  if (st.cfg.mode == train_mode::sync && !st.rows && st.grad_count > 0)
    st.fenced_round = held_round{std::exchange(st.grad_sum, {}), st.grad_count, st.step};
  st.grad_sum = {};
  st.grad_count = 0;
  st.refused_count = 0;
  if (st.rows) st.rows->drop_round();
  const auto& recent = st.ledger.recent();
  const std::int64_t complete_before = st.cfg.mode == train_mode::sync ? st.step : 0;
  return fence_report{st.step, {recent.begin(), recent.end()}, complete_before};
}

// The lost primary may have taken updates its backup never saw, which the
// other shards took: the shard counts them as taken and owes their part
// here until they are sent again. Its backups take the state again (the
// round dropped, the step, the pushes owed).
caf::result<std::int64_t> on_failover_step(shard_pointer self, failover_plan& plan) {
  auto& st = self->state;
  const auto step = plan.step;
  if (st.step < 0 || step < st.step)
    return caf::make_error(errc::shape_mismatch, me(st) + " stands at global step " +
                                                     std::to_string(st.step) +
                                                     ", past the failover's step " +
                                                     std::to_string(step));
  st.ledger.owe(plan.owed);
  keep_owed_round(st, plan);
  if (step > st.step || !plan.owed.empty()) {
    st.cfg.log.warn(me(st) + ": " + std::to_string(step - st.step) +
                    " update(s) taken elsewhere are missing here (" +
                    std::to_string(st.ledger.owed().size()) +
                    " owed until sent again); standing at global step " + std::to_string(step));
    settle_ema(st);
    st.step = step;
    release_waiters(st);
  }
  send_state_to_backups(self);
  return st.step;
}

}  // namespace downpour
