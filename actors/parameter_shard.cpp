#include "actors/parameter_shard.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "actors/failure.hpp"
#include "actors/peer_guard.hpp"
#include "actors/sync_rule.hpp"
#include "config/cluster_fingerprint.hpp"

namespace downpour {
namespace {

struct parameter_shard_state {
  shard_config cfg;
  std::vector<std::uint64_t> ranges;
  // Read-only once it is the parameters: pull replies share it with no
  // copy. An update writes the new parameters over the pushed gradient, in
  // the parts of its buffer this shard owns, and that becomes params.
  shared_tensor params;
  floats ema;
  std::int64_t step = -1;  // global steps applied; -1 until initialised
  // The decay of an EMA update still owed for the current params. A step's
  // EMA waits until the pull that follows its push is answered, so it
  // overlaps the worker's compute instead of delaying its parameters; it is
  // exact because params do not change before it is done.
  std::optional<float> ema_due;
  // Async/ssp: the last update if it was a push, and the step it was applied
  // at: a worker holding the parameters of that step can apply its own push
  // itself instead of pulling the result (replay_offer).
  std::optional<replay_offer> replayable;
  // Sync: the round's first fresh gradient; later ones are added into it.
  shared_tensor grad_sum;
  std::size_t grad_count = 0;
  std::int64_t dropped = 0;   // sync: stale gradients, never applied
  std::int64_t rejected = 0;  // malformed or non-finite pushes
  std::int64_t replayed = 0;  // pulls answered without parameters
  std::multimap<std::int64_t, caf::typed_response_promise<pull_reply>> pull_waiters;
  std::multimap<std::int64_t, caf::typed_response_promise<std::int64_t>> step_waiters;
  std::multimap<std::int64_t, caf::typed_response_promise<shard_snapshot>> snapshot_waiters;
  peer_guard guard;  // control only from the chief, pulls and pushes from members
  // A chief whose hello this fresh shard refused (other settings) and the
  // difference seen from here: its exit then ends this ps with that reason.
  std::optional<std::pair<caf::node_id, std::string>> refused_by;
  caf::strong_actor_ptr chief;  // the supervisor, told of by itself (join_atom)
  static inline const char* name = "parameter_shard";
};

using shard_pointer = shard_actor::stateful_pointer<parameter_shard_state>;

std::string from_worker(const push_msg& m) {
  return " from worker " + std::to_string(m.worker);
}

caf::error not_finite_error(const push_msg& m) {
  return caf::make_error(errc::not_finite, "gradient" + from_worker(m) + " has NaN or inf");
}

// Shape and stamp; finiteness is checked where the gradient is read anyway.
caf::error check_push(const parameter_shard_state& st, const push_msg& m) {
  auto from = from_worker(m);
  if (st.step < 0) return caf::make_error(errc::shape_mismatch, "push before init" + from);
  if (m.grad.size() != st.params.size())
    return caf::make_error(errc::shape_mismatch, "push of " + std::to_string(m.grad.size()) +
                                                     " floats to a shard of " +
                                                     std::to_string(st.params.size()) + from);
  if (judge_stamp(m.step, st.step) == stamp_verdict::future)
    return caf::make_error(errc::shape_mismatch,
                           "push stamped with future step " + std::to_string(m.step) + from);
  return caf::none;
}

// Pulls and awaits wait in maps keyed by the step they need.
template <class Map, class Make>
void release(Map& waiters, std::int64_t step, Make make) {
  auto end = waiters.upper_bound(step);
  for (auto it = waiters.begin(); it != end; ++it) it->second.deliver(make());
  waiters.erase(waiters.begin(), end);
}

// The parameters as they are now, for a pull: shared, not copied.
pull_reply current_params(const parameter_shard_state& st) {
  return pull_reply{st.step, shared_tensor{st.params.buffer, st.params.parts, st.cfg.wire}};
}

void settle_ema(parameter_shard_state& st) {
  if (!st.ema_due) return;
  ema_toward(st.ema.data(), st.params, *st.ema_due);
  st.ema_due.reset();
}

shard_snapshot snapshot_of(parameter_shard_state& st) {
  settle_ema(st);
  return shard_snapshot{st.step,        st.ranges,  tensor{st.params.values()},
                        tensor{st.ema}, st.dropped, st.rejected,
                        st.replayed};
}

void release_waiters(parameter_shard_state& st) {
  if (st.step < 0) return;
  release(st.pull_waiters, st.step, [&] { return current_params(st); });
  settle_ema(st);
  release(st.step_waiters, st.step, [&] { return st.step; });
  // Steps advance one at a time, so a snapshot waiter for step s is met
  // exactly at s; one below s was passed by a jump (a restore) and fails.
  auto end = st.snapshot_waiters.upper_bound(st.step);
  for (auto it = st.snapshot_waiters.begin(); it != end; ++it) {
    if (it->first == st.step)
      it->second.deliver(snapshot_of(st));
    else
      it->second.deliver(
          caf::make_error(errc::stopped, "the shard skipped step " + std::to_string(it->first)));
  }
  st.snapshot_waiters.erase(st.snapshot_waiters.begin(), end);
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
  if (!sgd_in_place(m.grad, st.params, lr)) return false;
  const std::int64_t base = st.step;
  commit(st, std::move(m.grad));
  st.replayable = replay_offer{m.worker, base, float_bits(lr)};
  return true;
}

// Sync: the mean of the round's gradients (count 1: the gradient itself).
void maybe_complete_round(parameter_shard_state& st) {
  if (st.grad_count == 0 || st.grad_count < st.cfg.required) return;
  const float lr = learning_rate_at(st.cfg.schedule, st.step);
  if (st.grad_count == 1)
    sgd_in_place(st.grad_sum, st.params, lr);
  else
    mean_sgd_in_place(st.grad_sum, st.params, lr, st.grad_count);
  st.grad_count = 0;
  commit(st, std::exchange(st.grad_sum, {}));
}

// The first gradient is kept as it came, later ones are added into it in
// arrival order.
void accumulate(parameter_shard_state& st, shared_tensor&& grad) {
  if (st.grad_count++ == 0)
    st.grad_sum = std::move(grad);
  else
    add_in_place(st.grad_sum, grad);
}

// The refusal goes back to the pushing worker as the push's error reply,
// and is logged and counted here.
caf::error reject(shard_pointer self, caf::error err) {
  auto& st = self->state;
  ++st.rejected;
  st.cfg.log.warn("parameter_shard " + std::to_string(st.cfg.index) +
                  ": rejected a push: " + self->system().render(err));
  return err;
}

// Every refused push is counted, in every mode and after the last step too;
// an accepted one is applied whole or (job over) not at all. The reply is
// the shard's step: in sync mode a stale gradient is dropped, not an error.
caf::result<std::int64_t> on_push(shard_pointer self, push_msg& m) {
  auto& st = self->state;
  const bool over = st.step >= st.cfg.last_step;
  auto err = check_push(st, m);
  if (!err && (over || st.cfg.mode == train_mode::sync) && !all_finite_parts(m.grad))
    err = not_finite_error(m);
  if (err) return reject(self, std::move(err));
  if (over) return st.step;  // the job is over; nothing more is applied
  if (st.cfg.mode != train_mode::sync) {
    if (!apply_pushed(st, m)) return reject(self, not_finite_error(m));
    return st.step;
  }
  if (judge_stamp(m.step, st.step) == stamp_verdict::stale) {
    ++st.dropped;
    return st.step;
  }
  accumulate(st, std::move(m.grad));
  maybe_complete_round(st);
  return st.step;
}

caf::result<std::int64_t> on_init(shard_pointer self, shard_init& init) {
  auto& st = self->state;
  if (init.params.values.size() != init.ema.values.size())
    return caf::make_error(errc::shape_mismatch, "init with params and shadows of unequal size");
  if (st.step >= 0) return st.step;  // already initialised: the cluster keeps its state
  st.ranges = std::move(init.ranges);
  st.params = shared_tensor{std::move(init.params.values)};
  st.ema = std::move(init.ema.values);
  st.step = init.step;
  release_waiters(st);
  return st.step;
}

// Recovery: the chief overwrites the shard with a checkpoint (every shard
// rolls back to the same step). Awaits and snapshots pending from before
// belong to helpers of the old epoch: they fail rather than fire at a step
// reached again later; waiting pulls are answered at the restored step.
caf::result<std::int64_t> on_restore(shard_pointer self, shard_init& init) {
  auto& st = self->state;
  if (init.params.values.size() != init.ema.values.size())
    return caf::make_error(errc::shape_mismatch, "restore with params and shadows of unequal size");
  auto gone = caf::make_error(errc::stopped, "the shard was restored");
  for (auto& w : st.step_waiters) w.second.deliver(gone);
  for (auto& w : st.snapshot_waiters) w.second.deliver(gone);
  st.step_waiters.clear();
  st.snapshot_waiters.clear();
  st.ranges = std::move(init.ranges);
  st.params = shared_tensor{std::move(init.params.values)};
  st.ema = std::move(init.ema.values);
  st.ema_due.reset();
  st.replayable.reset();
  st.grad_sum = {};
  st.grad_count = 0;
  st.step = init.step;
  st.cfg.log.info("parameter_shard " + std::to_string(st.cfg.index) + ": restored to global step " +
                  std::to_string(st.step));
  release_waiters(st);
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
    st.pull_waiters.emplace(std::max<std::int64_t>(min_step, 0), rp);
  }
  return rp;
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

// The caller must take this shard for the one it is (one ps answering at two
// entries of --ps-hosts would be initialised as both) and share its settings.
caf::result<std::int64_t> on_hello(shard_pointer self, const std::string& fingerprint,
                                   std::uint32_t shard, std::uint32_t worker) {
  auto& st = self->state;
  const auto sender = self->current_sender();
  auto me = "ps " + std::to_string(st.cfg.index);
  if (shard != st.cfg.index)
    return caf::make_error(errc::config_mismatch,
                           "the node at the address of ps " + std::to_string(shard) + " is " + me +
                               " (is one host:port in --ps-hosts twice, or under two names?)");
  if (auto diff = fingerprint_difference(fingerprint, st.cfg.fingerprint, me)) {
    st.guard.refuse("a hello with other settings", sender, " (" + *diff + ")");
    if (worker == 0 && st.step < 0 && sender)
      st.refused_by.emplace(sender->node(),
                            *fingerprint_difference(st.cfg.fingerprint, fingerprint, "the chief"));
    return caf::make_error(errc::config_mismatch, *diff);
  }
  if (sender && worker == 0)
    st.guard.admit_chief(sender->node());
  else if (sender)
    st.guard.admit_member(sender->node());
  return st.step;
}

// Exits from the chief (or this node) end the shard; one from a chief that
// refused this fresh ps ends it with the difference named.
void on_exit(shard_pointer self, caf::exit_msg& m) {
  auto& st = self->state;
  const auto sender = self->current_sender();
  if (st.refused_by && sender && sender->node() == st.refused_by->first)
    return self->quit(caf::make_error(errc::config_mismatch,
                                      "refused by the chief: " + st.refused_by->second));
  if (!st.guard.from_chief(sender, self->node())) return st.guard.refuse("an exit", sender);
  if (m.reason) self->quit(std::move(m.reason));
}

caf::result<shard_snapshot> on_snapshot_at(shard_pointer self, std::int64_t step) {
  auto& st = self->state;
  if (st.step == step) return snapshot_of(st);
  if (st.step > step)
    return caf::make_error(errc::stopped, "the shard is past step " + std::to_string(step));
  auto rp = self->make_response_promise<shard_snapshot>();
  st.snapshot_waiters.emplace(step, rp);
  return rp;
}

shard_actor::behavior_type parameter_shard(shard_pointer self, shard_config cfg) {
  end_on_exception(self);
  self->state.guard.set_log(cfg.log);
  self->state.cfg = std::move(cfg);
  self->state.guard.install(self);
  self->set_exit_handler([=](caf::exit_msg& m) { on_exit(self, m); });
  using step_result = caf::result<std::int64_t>;
  using pull_result = caf::result<pull_reply>;
  using snapshot_result = caf::result<shard_snapshot>;
  return {
      [=](hello_atom, const std::string& fp, std::uint32_t shard, std::uint32_t worker) {
        return on_hello(self, fp, shard, worker);
      },
      [=](init_atom, shard_init& init) -> step_result {
        if (!from_chief(self, "an init")) return unauthorized("init");
        return on_init(self, init);
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
      [=](push_atom, push_msg& m) -> step_result {  // mutable: its buffer is reused
        if (!from_member(self, "a push")) return unauthorized("push");
        return on_push(self, m);
      },
      [=](required_atom, std::uint64_t n) {
        if (!from_chief(self, "a round size")) return;
        self->state.cfg.required = std::max<std::uint64_t>(1, n);
        maybe_complete_round(self->state);
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
      [=](stats_atom) -> caf::result<shard_stats> {
        if (!from_chief(self, "a stats request")) return unauthorized("stats");
        auto& st = self->state;
        return shard_stats{st.step, st.ranges, st.dropped, st.rejected, st.replayed};
      },
      [=](stop_atom) {
        if (from_chief(self, "a stop")) self->quit();
      },
      [=](join_atom) {
        if (from_chief(self, "a join")) self->state.chief = self->current_sender();
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
