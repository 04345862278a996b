#include <string>
#include <utility>

#include "actors/shard_state.hpp"
#include "config/durations.hpp"
#include "model/sync_rule.hpp"

namespace downpour {
namespace {

std::string from_worker(const push_msg& m) {
  return " from worker " + std::to_string(m.worker);
}

caf::error not_finite_error(const push_msg& m) {
  return caf::make_error(errc::not_finite, "gradient" + from_worker(m) + " has NaN or inf");
}

// Shape and stamp; finiteness is checked where the gradient is read anyway.
caf::error check_push(const parameter_shard_state& st, const push_msg& m) {
  auto from = from_worker(m);
  if (st.step < 0) return caf::make_error(errc::not_initialised, "push before init" + from);
  if (m.grad.size() != st.params.size())
    return caf::make_error(errc::shape_mismatch, "push of " + std::to_string(m.grad.size()) +
                                                     " floats to a shard of " +
                                                     std::to_string(st.params.size()) + from);
  if (judge_stamp(m.step, st.step) == stamp_verdict::future)
    return caf::make_error(errc::future_step,
                           "push stamped with future step " + std::to_string(m.step) + from);
  return caf::none;
}

// next holds the updated parameters: they become params (the EMA toward
// them is owed) and the global step advances.
void commit(parameter_shard_state& st, shared_tensor&& next) {
  settle_ema(st);
  st.replayable.reset();
  st.params = std::move(next);
  st.ema_due = ema_decay_at(st.cfg.ema_decay, st.step);
  ++st.step;
  release_waiters(st);
}

// Async: one SGD and one EMA update with the schedule at the current step,
// exactly as the reference trainer does them, written over the gradient: a
// gradient with NaN or inf changes nothing (false).
bool apply_pushed(parameter_shard_state& st, push_msg& m) {
  const float lr = learning_rate_at(st.cfg.schedule, st.step);
  if (!sgd_into_grad(m.grad, st.params, lr)) return false;
  if (st.meter) st.meter->staleness_steps.observe(static_cast<double>(st.step - m.step));
  if (st.rows) st.rows->apply(m, {lr, st.step});
  const std::int64_t base = st.step;
  commit(st, std::move(m.grad));
  st.replayable = replay_offer{m.worker, base, float_bits(lr)};
  return true;
}

// The first gradient is kept as it came, later ones are added into it in
// arrival order.
void accumulate(parameter_shard_state& st, push_msg& m) {
  if (st.rows) st.rows->add_to_round(m);
  if (st.grad_count == 0) st.round_began = std::chrono::steady_clock::now();
  if (st.grad_count++ == 0)
    st.grad_sum = std::move(m.grad);
  else
    add_into_sum(st.grad_sum, m.grad);
}

}  // namespace

// Sync: the mean of the round's gradients (count 1: the gradient itself).
void maybe_complete_round(parameter_shard_state& st) {
  if (st.grad_count == 0 || st.grad_count < st.cfg.required) return;
  const float lr = learning_rate_at(st.cfg.schedule, st.step);
  if (st.grad_count == 1)
    sgd_into_grad(st.grad_sum, st.params, lr);
  else
    mean_sgd_into_sum(st.grad_sum, st.params, lr, st.grad_count);
  if (st.rows) st.rows->apply_round({lr, st.step});
  if (st.meter) st.meter->round_wait_seconds.observe(seconds_since(st.round_began));
  st.grad_count = 0;
  commit(st, std::exchange(st.grad_sum, {}));
}

caf::error reject(shard_pointer self, caf::error err, const char* what) {
  auto& st = self->state;
  ++st.rejected;
  st.cfg.log.warn("parameter_shard " + std::to_string(st.cfg.index) + ": rejected " + what + ": " +
                  self->system().render(err));
  return err;
}

// Every refused push is counted, in every mode and after the last step too;
// an accepted one is applied whole or (job over) not at all. The reply is
// the shard's step: in sync mode a stale gradient is dropped, not an error.
caf::result<std::int64_t> on_push(shard_pointer self, push_msg& m) {
  auto& st = self->state;
  const bool over = st.step >= st.cfg.last_step;
  auto err = check_push(st, m);
  if (!err && st.rows) err = st.rows->check(m);
  if (!err && (over || st.cfg.mode == train_mode::sync) && !all_finite_parts(m.grad))
    err = not_finite_error(m);
  if (err) return reject(self, std::move(err), "a push");
  if (over) return st.step;  // the job is over; nothing more is applied
  // Before the update: a snapshot taken right after it holds the position.
  for (const auto& at : m.position) merge_position(st.positions, m.worker, at);
  if (st.cfg.mode != train_mode::sync) {
    if (!apply_pushed(st, m)) return reject(self, not_finite_error(m), "a push");
    return st.step;
  }
  if (judge_stamp(m.step, st.step) == stamp_verdict::stale) {
    ++st.dropped;
    return st.step;
  }
  accumulate(st, m);
  maybe_complete_round(st);
  return st.step;
}

}  // namespace downpour
