#include "actors/parameter_shard.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "protocol/failure.hpp"
#include "protocol/metered_config.hpp"
#include "actors/shard_state.hpp"
#include "config/cluster_fingerprint.hpp"

namespace downpour {

// Shared, not copied.
pull_reply current_params(const parameter_shard_state& st) {
  return pull_reply{st.step, shared_tensor{st.params.buffer, st.params.parts, st.cfg.wire}};
}

void settle_ema(parameter_shard_state& st) {
  if (!st.ema_due) return;
  ema_toward(st.ema.data(), st.params, *st.ema_due);
  st.ema_due.reset();
}

caf::expected<pull_reply> current_params(parameter_shard_state& st, const row_pull& p) {
  if (!st.rows) return caf::make_error(errc::bad_keys, "a pull of rows from a dense model's shard");
  const auto began = std::chrono::steady_clock::now();
  auto rows = st.rows->pull(p);
  if (!rows) return rows.error();
  keep_pull_for_backups(st, p);
  meter_rows_pulled(st, p.keys.size(), began);
  auto reply = current_params(st);
  reply.rows = std::move(*rows);
  return reply;
}

namespace {

// Pulls and awaits wait in maps keyed by the step they need.
template <class Map, class Deliver>
void release(Map& waiters, std::int64_t step, Deliver deliver) {
  auto end = waiters.upper_bound(step);
  for (auto it = waiters.begin(); it != end; ++it) deliver(it->second);
  waiters.erase(waiters.begin(), end);
}

void answer(parameter_shard_state& st, pull_waiter& w) {
  if (!w.rows) {
    w.promise.deliver(current_params(st));
    return;
  }
  auto reply = current_params(st, *w.rows);
  if (reply)
    w.promise.deliver(std::move(*reply));
  else
    w.promise.deliver(std::move(reply.error()));
}

shard_snapshot snapshot_of(parameter_shard_state& st) {
  settle_ema(st);
  shard_snapshot snap{st.step,    st.ranges,   tensor{st.params.values()}, tensor{st.ema},
                      st.dropped, st.rejected, st.replayed,                {},
                      0,          0,           st.positions, tensor{st.dense.slots()}};
  add_snapshot_rows(st, snap);
  return snap;
}

read_position position_of(const parameter_shard_state& st, std::uint32_t worker) {
  for (const auto& p : st.positions)
    if (p.worker == worker) return p.at;
  return {};
}

}  // namespace

void answer_pulls_now(parameter_shard_state& st) {
  for (auto& [step, waiter] : st.pull_waiters) answer(st, waiter);
  st.pull_waiters.clear();
  settle_ema(st);
}

void release_waiters(parameter_shard_state& st) {
  if (st.step < 0) return;
  for (auto& [worker, promise] : st.position_waiters) promise.deliver(position_of(st, worker));
  st.position_waiters.clear();
  release(st.pull_waiters, st.step, [&](pull_waiter& w) { answer(st, w); });
  settle_ema(st);
  release(st.step_waiters, st.step, [&](auto& promise) { promise.deliver(st.step); });
  // Steps advance one at a time, so a snapshot waiter for step s is met
  // exactly at s; one below s was passed by a jump (a restore) and fails.
  auto end = st.snapshot_waiters.upper_bound(st.step);
  for (auto it = st.snapshot_waiters.begin(); it != end; ++it) {
    if (it->first == st.step)
      it->second.deliver(snapshot_of(st));
    else
      it->second.deliver(
          caf::make_error(errc::step_passed, "the shard skipped step " + std::to_string(it->first)));
  }
  st.snapshot_waiters.erase(st.snapshot_waiters.begin(), end);
}

namespace {

// The rows an init or restore gives this shard (a dense model's shard takes none).
caf::error take_rows(parameter_shard_state& st, row_part& last) {
  auto rows = staged_with(st, last);
  if (!rows) return rows.error();
  const row_part& part = *rows;
  if (st.cfg.rows.empty())
    return part.keys.size() == 0
               ? caf::none
               : caf::make_error(errc::shape_mismatch, "rows sent to a shard of a dense model");
  st.rows.emplace(st.cfg.rows, row_range{part.first, part.last}, st.cfg.mode);
  return st.rows->load(part);
}

caf::result<std::int64_t> on_init(shard_pointer self, shard_init& init) {
  auto& st = self->state;
  if (init.params.values.size() != init.ema.values.size())
    return caf::make_error(errc::shape_mismatch, "init with params and shadows of unequal size");
  if (st.step >= 0) {  // already initialised: the cluster keeps its state
    st.staged.reset();
    return st.step;
  }
  if (auto err = take_rows(st, init.rows)) return err;
  if (auto err = take_dense(st, init)) return err;
  st.ranges = std::move(init.ranges);
  st.params = shared_tensor{std::move(init.params.values)};
  st.ema = std::move(init.ema.values);
  st.positions = std::move(init.positions);
  st.step = init.step;
  release_waiters(st);
  send_state_to_backups(self);
  return st.step;
}

}  // namespace

// Awaits and snapshots pending from before belong to helpers of the old
// epoch: they fail rather than fire at a step reached again later; waiting
// pulls are answered at the new step.
caf::error take_state(shard_pointer self, shard_init& init) {
  auto& st = self->state;
  if (init.params.values.size() != init.ema.values.size())
    return caf::make_error(errc::shape_mismatch, "a state with params and shadows of unequal size");
  if (auto err = take_rows(st, init.rows)) return err;
  if (auto err = take_dense(st, init)) return err;
  auto gone = caf::make_error(errc::restored, "the shard was restored");
  for (auto& w : st.step_waiters) w.second.deliver(gone);
  for (auto& w : st.snapshot_waiters) w.second.deliver(gone);
  st.step_waiters.clear();
  st.snapshot_waiters.clear();
  st.frozen.clear();
  st.ranges = std::move(init.ranges);
  st.params = shared_tensor{std::move(init.params.values)};
  st.ema = std::move(init.ema.values);
  st.positions = std::move(init.positions);
  st.ema_due.reset();
  st.replayable.reset();
  st.grad_sum = {};
  st.grad_count = 0;
  st.refused_count = 0;
  st.step = init.step;
  st.ledger = std::move(init.ledger);
  release_waiters(st);
  return caf::none;
}

namespace {

// Recovery: the chief overwrites the shard with a checkpoint (every shard
// rolls back to the same step); its backups take the same state.
caf::result<std::int64_t> on_restore(shard_pointer self, shard_init& init) {
  auto& st = self->state;
  const auto reached = st.step;
  if (auto err = take_state(self, init)) return err;
  std::string back;  // a fresh ps had reached nothing
  if (reached >= 0) back = " (rolled back from global step " + std::to_string(reached) + ")";
  st.cfg.log.info("parameter_shard " + std::to_string(st.cfg.index) + ": restored to global step " +
                  std::to_string(st.step) + back);
  send_state_to_backups(self);
  return st.step;
}

// Answered before the owed EMA is done: the worker computes meanwhile.
caf::result<pull_reply> on_pull(shard_pointer self, std::int64_t min_step) {
  auto& st = self->state;
  auto rp = self->make_response_promise<pull_reply>();
  if (st.step >= 0 && st.step >= min_step) {
    rp.deliver(current_params(st));
    settle_ema(st);
  } else {
    st.pull_waiters.emplace(std::max<std::int64_t>(min_step, 0), pull_waiter{rp, std::nullopt});
  }
  return rp;
}

// Keys are checked at once, not when a waiting pull is answered.
caf::result<pull_reply> on_row_pull(shard_pointer self, row_pull& p) {
  auto& st = self->state;
  if (!st.rows)
    return reject(self,
                  caf::make_error(errc::bad_keys, "a pull of rows from a dense model's shard"),
                  "a pull");
  if (auto err = st.rows->check_pull(p.keys)) return reject(self, std::move(err), "a pull");
  if (st.step < 0 || st.step < p.min_step) {
    auto rp = self->make_response_promise<pull_reply>();
    const auto at = std::max<std::int64_t>(p.min_step, 0);
    st.pull_waiters.emplace(at, pull_waiter{rp, std::move(p)});
    return rp;
  }
  auto reply = current_params(st, p);
  if (!reply) return reject(self, std::move(reply.error()), "a pull");
  settle_ema(st);
  return std::move(*reply);
}

bool same_offer(const replay_offer& a, const replay_offer& b) {
  return a.worker == b.worker && a.base == b.base && a.lr_bits == b.lr_bits;
}

// The offering worker holds the current parameters if its update is the
// shard's last and only one since the worker pulled.
caf::result<pull_reply> on_pull_offer(shard_pointer self, const replay_offer& offer) {
  auto& st = self->state;
  if (!st.replayable || !same_offer(*st.replayable, offer) || st.step != offer.base + 1)
    return on_pull(self, 0);
  ++st.replayed;
  auto rp = self->make_response_promise<pull_reply>();
  rp.deliver(pull_reply{st.step, shared_tensor{}, true});
  settle_ema(st);
  return rp;
}

caf::result<std::int64_t> on_await(shard_pointer self, std::int64_t target) {
  auto& st = self->state;
  if (st.step >= target) return st.step;
  auto rp = self->make_response_promise<std::int64_t>();
  st.step_waiters.emplace(target, rp);
  return rp;
}

caf::result<shard_snapshot> on_snapshot_at(shard_pointer self, std::int64_t step) {
  auto& st = self->state;
  if (st.step == step) return snapshot_of(st);
  if (st.step > step)
    return caf::make_error(errc::step_passed, "the shard is past step " + std::to_string(step));
  auto rp = self->make_response_promise<shard_snapshot>();
  st.snapshot_waiters.emplace(step, rp);
  return rp;
}

shard_actor::behavior_type parameter_shard(shard_pointer self, shard_config cfg) {
  end_on_exception(self);
  self->state.guard.set_log(cfg.log);
  self->state.cfg = std::move(cfg);
  if (auto* meters = meters_of(self->system()))
    self->state.meter = &meters->shard(self->state.cfg.index);
  start_key_rates(self->state);
  self->state.guard.install(self);
  self->set_exit_handler([=](caf::exit_msg& m) { on_exit(self, m); });
  self->set_down_handler([=](caf::down_msg& dm) { on_down(self, dm); });
  using step_result = caf::result<std::int64_t>;
  using pull_result = caf::result<pull_reply>;
  using snapshot_result = caf::result<shard_snapshot>;
  return {
      [=](challenge_atom) { return issue_nonce(self); },
      [=](hello_atom, const hello_msg& m) { return on_hello(self, m); },
      [=](init_atom, shard_init& init) -> step_result {
        if (!from_chief(self, "an init")) return unauthorized("init");
        return on_init(self, init);
      },
      [=](init_atom, row_part& page) -> caf::result<std::uint64_t> {
        if (!from_chief(self, "a page of rows")) return unauthorized("init");
        return on_stage_rows(self, page);
      },
      [=](restore_atom, shard_init& init) -> step_result {
        if (!from_chief(self, "a restore")) return unauthorized("restore");
        return on_restore(self, init);
      },
      [=](pull_atom, std::int64_t min_step) -> pull_result {
        if (!from_member(self, "a pull")) return unauthorized("pull");
        return on_pull(self, min_step);
      },
      [=](pull_atom, const replay_offer& offer) -> pull_result {
        if (!from_member(self, "a pull")) return unauthorized("pull");
        return on_pull_offer(self, offer);
      },
      [=](pull_atom, row_pull& p) -> pull_result {
        if (!from_pullers(self, p)) return unauthorized("pull");
        return on_row_pull(self, p);
      },
      [=](push_atom, push_msg& m) -> step_result {  // mutable: its buffer is reused
        if (!from_worker(self, "a push", m.worker)) return unauthorized("push");
        if (!may_push(self)) return fenced_push();
        return after_backups(self, take_push(self, m));
      },
      [=](push_atom, push_pull& x) -> caf::result<push_pull_reply> {
        if (!from_worker(self, "a push", x.push.worker) ||
            !from_pullers(self, x.pull))
          return unauthorized("push");
        if (!may_push(self)) return fenced_push();
        return after_backups(self, on_push_pull(self, x));
      },
      [=](push_atom, push_batch& x) -> caf::result<push_batch_reply> {
        if (!from_batch_workers(self, x)) return unauthorized("push");
        if (!may_push(self)) return fenced_push();
        return after_backups(self, on_push_batch(self, x));
      },
      [=](required_atom, std::uint64_t n) {
        if (!from_chief(self, "a round size")) return;
        // Forwarded first: a backup that has replayed the same pushes defers
        // a raise made mid-round exactly as this copy does.
        const auto size = std::max<std::uint64_t>(1, n);
        forward_required(self, size);
        set_required(self->state, static_cast<std::size_t>(size));
      },
      [=](replica_atom, replica_set& set) -> step_result {
        if (!from_chief(self, "a replica set")) return unauthorized("replica set");
        return on_replica_set(self, set);
      },
      [=](replica_atom, replica_update& u) -> step_result { return on_replica_update(self, u); },
      [=](replica_atom, caf::actor& backup) -> step_result { return on_backup_join(self, backup); },
      [=](replica_atom, std::uint32_t k) -> caf::result<caf::actor> {
        if (!from_member(self, "a copy lookup")) return unauthorized("copy lookup");
        return on_copy_lookup(self, k);
      },
      [=](failover_atom) -> caf::result<fence_report> {
        if (!from_chief(self, "a failover fence")) return unauthorized("failover");
        return on_failover_fence(self);
      },
      [=](failover_atom, failover_plan& plan) -> step_result {
        if (!from_chief(self, "a failover step")) return unauthorized("failover");
        return on_failover_step(self, plan);
      },
      [=](resend_atom, push_msg& m) -> step_result {
        if (!from_worker(self, "a push", m.worker)) return unauthorized("push");
        // A retired or orphaned copy: the push is sent again to the live one.
        if (self->state.primary || self->state.orphaned) return fenced_push();
        return on_resend(self, m);
      },
      [=](await_atom, std::int64_t target) -> step_result {
        if (!from_chief(self, "an await")) return unauthorized("await");
        return on_await(self, target);
      },
      [=](snapshot_atom) -> snapshot_result {
        if (!from_chief(self, "a snapshot")) return unauthorized("snapshot");
        return snapshot_of(self->state);
      },
      [=](snapshot_atom, std::int64_t step) -> snapshot_result {
        if (!from_chief(self, "a snapshot")) return unauthorized("snapshot");
        return on_snapshot_at(self, step);
      },
      [=](snapshot_atom, const row_page_ask& ask) -> caf::result<row_part> {
        if (!from_chief(self, "a snapshot")) return unauthorized("snapshot");
        return on_row_page(self, ask);
      },
      [=](stats_atom) -> caf::result<shard_stats> {
        if (!from_chief(self, "a stats request")) return unauthorized("stats");
        return stats_of(self->state);
      },
      [=](position_atom, std::uint32_t worker) -> caf::result<read_position> {
        if (!from_member(self, "a position request")) return unauthorized("position");
        auto& st = self->state;
        if (st.step >= 0) return position_of(st, worker);
        auto rp = self->make_response_promise<read_position>();
        st.position_waiters.emplace_back(worker, rp);
        return rp;
      },
      [=](stop_atom) { on_stop(self); },
      [=](join_atom) {
        if (from_chief(self, "a join")) on_chief_join(self);
      },
      [=](stop_atom, std::string& why) {
        if (!from_chief(self, "a stop request")) return;
        if (auto& chief = self->state.chief)
          return self->send(caf::actor_cast<supervisor_actor>(chief), stop_atom_v, why);
        self->quit(caf::make_error(errc::interrupted, why + " before the job started"));
      },
  };
}

}  // namespace

shard_actor spawn_parameter_shard(caf::actor_system& sys, shard_config cfg) {
  return sys.spawn(parameter_shard, std::move(cfg));
}


}  // namespace downpour