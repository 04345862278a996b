// A failover that loses no update (protocol/push_ledger.hpp): the pushes a
// shard took last are remembered by their seq; one the chief's plan says
// this shard owes is applied when its trainer's node sends it again, with
// the schedule (learning rate, EMA decay) of the step it was taken at on
// the shards that have it, and without a step of its own: the failover
// counted it already. Sync: the round another shard completed and this one
// did not is kept at the fence with the gradients it had; the pushes it
// owes join it when sent again, and the last one completes it.
#include <algorithm>
#include <string>
#include <utility>

#include "actors/shard_state.hpp"
#include "model/sync_rule.hpp"

namespace downpour {
namespace {

std::string me(const parameter_shard_state& st) {
  return "parameter_shard " + std::to_string(st.cfg.index);
}

caf::error not_owed() {
  return caf::make_error(errc::fenced,
                         "a push no shard took before the failover (its step is trained again)");
}

caf::error check_resent(const parameter_shard_state& st, const push_msg& m) {
  if (m.grad.size() != st.params.size())
    return caf::make_error(errc::shape_mismatch, "a push sent again of " +
                                                     std::to_string(m.grad.size()) +
                                                     " floats to a shard of " +
                                                     std::to_string(st.params.size()));
  if (!all_finite_parts(m.grad))
    return caf::make_error(errc::not_finite, "a push sent again has NaN or inf");
  return caf::none;
}

// The update of apply_pushed at step `at`, the global step left as it is.
void fill(parameter_shard_state& st, push_msg& m, const std::vector<row_ref>& claimed,
          std::int64_t at) {
  const float lr = learning_rate_at(st.cfg.schedule, at);
  const floats own_rules = segment_gradients(st, m.grad, 1);
  sgd_into_grad(m.grad, st.params, lr);
  apply_segments(st, m.grad, own_rules, {lr, at});
  if (st.rows) st.rows->apply(m, claimed, {lr, at});
  settle_ema(st);
  st.replayable.reset();
  st.params = std::move(m.grad);
  st.ema_due = ema_decay_at(st.cfg.ema_decay, at);
  st.ledger.filled({m.seq, at});
}

bool owes_of_round(const parameter_shard_state& st, std::int64_t step) {
  const auto& owed = st.ledger.owed();
  return std::any_of(owed.begin(), owed.end(), [&](const push_id& x) { return x.step == step; });
}

// Sync: the owed round complete, its mean applied as maybe_complete_round
// would have at its step; the global step stays.
void apply_owed_round(parameter_shard_state& st) {
  auto r = std::move(*st.owed_round);
  st.owed_round.reset();
  mean_update(st, r.sum, r.count, r.step);
  settle_ema(st);
  st.replayable.reset();
  st.params = std::move(r.sum);
  st.ema_due = ema_decay_at(st.cfg.ema_decay, r.step);
}

// Sync: a push of the round owed joins its gradients; the last one owed
// completes it.
void add_to_owed_round(parameter_shard_state& st, push_msg& m, std::int64_t at) {
  auto& r = *st.owed_round;
  if (r.count++ == 0)
    r.sum = std::move(m.grad);
  else
    add_into_sum(r.sum, m.grad);
  st.ledger.filled({m.seq, at});
  if (!owes_of_round(st, r.step)) apply_owed_round(st);
}

}  // namespace

void keep_owed_round(parameter_shard_state& st, const failover_plan& plan) {
  auto fenced = std::exchange(st.fenced_round, std::nullopt);
  st.owed_round.reset();
  if (st.cfg.mode != train_mode::sync || st.rows || plan.step != st.step + 1 ||
      !owes_of_round(st, st.step))
    return;
  st.owed_round = fenced ? std::move(*fenced) : held_round{{}, 0, st.step};
}

void note_taken(parameter_shard_state& st, const push_msg& m, std::int64_t at) {
  if (m.seq != 0) st.ledger.taken({m.seq, at});
}

caf::expected<std::int64_t> take_resent_push(shard_pointer self, push_msg& m) {
  auto& st = self->state;
  if (m.seq != 0 && st.ledger.has_taken(m.seq)) return st.step;
  const auto at = m.seq != 0 ? st.ledger.owed_at(m.seq) : std::nullopt;
  if (!at) return not_owed();
  if (auto err = check_resent(st, m)) return reject(self, std::move(err), "a push sent again");
  std::vector<row_ref> claimed;
  if (st.rows) {
    auto rows = st.rows->claim_resent(m);
    if (!rows) return reject(self, std::move(rows.error()), "a push sent again");
    claimed = std::move(*rows);
  }
  const bool of_round = st.owed_round && st.owed_round->step == *at;
  if (st.cfg.mode == train_mode::sync && !of_round) return not_owed();
  keep_for_backups(st, m, replica_step::filled_push);
  if (of_round)
    add_to_owed_round(st, m, *at);
  else
    fill(st, m, claimed, *at);
  // The primary tells the chief, whose count of lost updates it was in.
  if (!st.primary && st.chief)
    self->send(caf::actor_cast<supervisor_actor>(st.chief), filled_atom_v, m.seq);
  st.cfg.log.info(me(st) + ": took a push owed since the failover (" +
                  std::to_string(st.ledger.owed().size()) + " owed still)");
  return st.step;
}

caf::result<std::int64_t> on_resend(shard_pointer self, push_msg& m) {
  return after_backups(self, take_resent_push(self, m));
}

}  // namespace downpour
