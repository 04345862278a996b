#include <algorithm>
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
bool apply_pushed(parameter_shard_state& st, push_msg& m, const std::vector<row_ref>& claimed) {
  const float lr = learning_rate_at(st.cfg.schedule, st.step);
  const floats own_rules = segment_gradients(st, m.grad, 1);
  if (!sgd_into_grad(m.grad, st.params, lr)) return false;
  apply_segments(st, m.grad, own_rules, {lr, st.step});
  if (st.meter) st.meter->staleness_steps.observe(static_cast<double>(st.step - m.step));
  if (st.rows) st.rows->apply(m, claimed, {lr, st.step});
  const std::int64_t base = st.step;
  note_taken(st, m, base);
  commit(st, std::move(m.grad));
  // A worker replays SGD only: with rules of its own it pulls the result.
  if (st.dense.plain()) st.replayable = replay_offer{m.worker, base, float_bits(lr)};
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

// A refused push for the sync round in progress still counts toward its
// size: the round never waits for a gradient that was refused.
caf::error refuse_push(shard_pointer self, const push_msg& m, caf::error err) {
  auto& st = self->state;
  auto reason = reject(self, std::move(err), "a push");
  if (st.cfg.mode == train_mode::sync && st.step >= 0 && st.step < st.cfg.last_step &&
      judge_stamp(m.step, st.step) == stamp_verdict::fresh) {
    ++st.refused_count;
    maybe_complete_round(st);
  }
  return reason;
}

// take_push without its meter.
caf::expected<std::int64_t> take_checked_push(shard_pointer self, push_msg& m) {
  auto& st = self->state;
  const bool over = st.step >= st.cfg.last_step;
  auto err = check_push(st, m);
  std::vector<row_ref> claimed;
  if (!err && st.rows) {
    auto rows = st.rows->claim(m);
    if (rows)
      claimed = std::move(*rows);
    else
      err = std::move(rows.error());
  }
  if (!err && (over || st.cfg.mode == train_mode::sync) && !all_finite_parts(m.grad))
    err = not_finite_error(m);
  if (err) return refuse_push(self, m, std::move(err));
  if (over) return st.step;  // the job is over; nothing more is applied
  // Before the update: a snapshot taken right after it holds the position.
  for (const auto& at : m.position) merge_position(st.positions, m.worker, at);
  if (st.cfg.mode != train_mode::sync) {
    if (!apply_pushed(st, m, claimed)) return reject(self, not_finite_error(m), "a push");
    return st.step;
  }
  if (judge_stamp(m.step, st.step) == stamp_verdict::stale) {
    ++st.dropped;
    return st.step;
  }
  note_taken(st, m, st.step);
  accumulate(st, m);
  maybe_complete_round(st);
  return st.step;
}

}  // namespace

// Sync: the mean of the round's gradients (count 1: the gradient itself),
// refused pushes counted toward its size but not in the mean. A round
// whose every push was refused takes no step: its workers push again.
void maybe_complete_round(parameter_shard_state& st) {
  if (st.grad_count + st.refused_count < st.cfg.required) return;
  st.refused_count = 0;
  if (st.next_required) st.cfg.required = *std::exchange(st.next_required, std::nullopt);
  if (st.grad_count == 0) return answer_pulls_now(st);
  const float lr = mean_update(st, st.grad_sum, st.grad_count, st.step);
  if (st.rows) st.rows->apply_round({lr, st.step});
  if (st.meter) st.meter->round_wait_seconds.observe(seconds_since(st.round_began));
  st.grad_count = 0;
  commit(st, std::exchange(st.grad_sum, {}));
}

float mean_update(parameter_shard_state& st, shared_tensor& sum, std::size_t count,
                  std::int64_t at) {
  const float lr = learning_rate_at(st.cfg.schedule, at);
  const floats own_rules = segment_gradients(st, sum, count);
  if (count == 1)
    sgd_into_grad(sum, st.params, lr);
  else
    mean_sgd_into_sum(sum, st.params, lr, count);
  apply_segments(st, sum, own_rules, {lr, at});
  return lr;
}

void set_required(parameter_shard_state& st, std::size_t n) {
  n = std::max<std::size_t>(1, n);
  if (n > st.cfg.required && st.grad_count + st.refused_count > 0) {
    st.next_required = n;
    return;
  }
  st.next_required.reset();
  st.cfg.required = n;
  maybe_complete_round(st);
}

caf::error reject(shard_pointer self, caf::error err, const char* what) {
  auto& st = self->state;
  ++st.rejected;
  st.cfg.log.warn("parameter_shard " + std::to_string(st.cfg.index) + ": rejected " + what + ": " +
                  self->system().render(err));
  return err;
}

void meter_rows_pulled(parameter_shard_state& st, std::size_t rows,
                       std::chrono::steady_clock::time_point began) {
  if (!st.meter) return;
  st.meter->rows_pulled.fetch_add(rows, std::memory_order_relaxed);
  st.meter->pull_seconds.observe(seconds_since(began));
}

void meter_rows_pushed(parameter_shard_state& st, std::size_t rows,
                       std::chrono::steady_clock::time_point began) {
  if (!st.meter || !st.rows) return;
  st.meter->rows_pushed.fetch_add(rows, std::memory_order_relaxed);
  st.meter->push_seconds.observe(seconds_since(began));
}

// Every refused push is counted, in every mode and after the last step too;
// an accepted one is applied whole or (job over) not at all. The reply is
// the shard's step: in sync mode a stale gradient is dropped, not an error.
// A primary's backups take the same pushes through here too, in the same
// order: from the same state they reach the same verdicts and the same bits.
caf::expected<std::int64_t> take_push(shard_pointer self, push_msg& m) {
  const auto began = std::chrono::steady_clock::now();
  keep_for_backups(self->state, m);
  auto step = take_checked_push(self, m);
  note_verdict(self->state, !step);
  if (step) meter_rows_pushed(self->state, m.keys.size(), began);
  return step;
}


namespace {

// A pull that follows pushes is answered at once: async pulls wait for no
// step (a shard not yet initialised refused the pushes and has no rows).
caf::expected<pull_reply> pull_after_push(shard_pointer self, const row_pull& p) {
  auto& st = self->state;
  if (st.step < 0 || st.step < p.min_step)
    return reject(self, caf::make_error(errc::not_initialised, "a pull of rows before init"),
                  "a pull");
  auto reply = current_params(st, p);
  if (!reply) return reject(self, std::move(reply.error()), "a pull");
  settle_ema(st);
  return reply;
}

}  // namespace

caf::expected<push_pull_reply> on_push_pull(shard_pointer self, push_pull& x) {
  push_pull_reply out;
  auto pushed = take_push(self, x.push);
  if (pushed)
    out.pushed = *pushed;
  else
    out.refusal = std::move(pushed.error());
  auto pull = pull_after_push(self, x.pull);
  if (!pull) return std::move(pull.error());
  out.pull = std::move(*pull);
  return out;
}

// A merged pull speaks for each trainer it names.
bool from_pullers(shard_pointer self, const row_pull& p) {
  if (!from_worker(self, "a pull", p.worker)) return false;
  return std::all_of(p.sharers.begin(), p.sharers.end(),
                     [&](std::uint32_t w) { return from_worker(self, "a pull", w); });
}

bool from_batch_workers(shard_pointer self, const push_batch& x) {
  for (const auto& m : x.pushes)
    if (!from_worker(self, "a push", m.worker)) return false;
  return std::all_of(x.pull.begin(), x.pull.end(),
                     [&](const row_pull& p) { return from_pullers(self, p); });
}

caf::expected<push_batch_reply> on_push_batch(shard_pointer self, push_batch& x) {
  if (x.pull.size() > 1)
    return reject(self,
                  caf::make_error(errc::bad_keys, "a push batch with " +
                                                      std::to_string(x.pull.size()) +
                                                      " pulls (expected at most one)"),
                  "a push batch");
  push_batch_reply out;
  out.refusals.reserve(x.pushes.size());
  for (auto& m : x.pushes) {
    auto pushed = take_push(self, m);
    out.refusals.push_back(pushed ? caf::error{} : std::move(pushed.error()));
  }
  out.step = self->state.step;
  for (const auto& p : x.pull) {
    auto pull = pull_after_push(self, p);
    if (pull)
      out.pull.push_back(std::move(*pull));
    else
      out.pull_refusal = std::move(pull.error());
  }
  return out;
}

}  // namespace downpour
