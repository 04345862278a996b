#include "actors/parameter_shard.hpp"

#include <cmath>
#include <map>

#include "runtime/cluster_config.hpp"

namespace downpour {
namespace {

struct parameter_shard_state {
  shard_config cfg;
  std::vector<std::uint64_t> ranges;
  std::vector<float> params;
  std::vector<float> ema;
  std::int64_t step = -1;  // updates applied; -1 until initialised
  std::int64_t rejected = 0;
  std::vector<caf::typed_response_promise<pull_reply>> early_pulls;
  std::multimap<std::int64_t, caf::typed_response_promise<std::int64_t>> step_waiters;
  static inline const char* name = "parameter_shard";
};

using shard_pointer = shard_actor::stateful_pointer<parameter_shard_state>;

bool all_finite(const std::vector<float>& v) {
  for (float x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

caf::error check_push(const parameter_shard_state& st, const push_msg& m) {
  if (m.grad.values.size() != st.params.size())
    return caf::make_error(errc::shape_mismatch,
                           "push of " + std::to_string(m.grad.values.size()) +
                               " floats to a shard of " + std::to_string(st.params.size()));
  if (!all_finite(m.grad.values))
    return caf::make_error(errc::not_finite,
                           "gradient from worker " + std::to_string(m.worker) + " has NaN or inf");
  if (st.step >= st.cfg.last_step)
    return caf::make_error(errc::stopped, "the shard is at its last step");
  return caf::none;
}

void release_waiters(parameter_shard_state& st) {
  auto end = st.step_waiters.upper_bound(st.step);
  for (auto it = st.step_waiters.begin(); it != end; ++it) it->second.deliver(st.step);
  st.step_waiters.erase(st.step_waiters.begin(), end);
}

// One SGD update and one EMA update with the schedule at the current step,
// exactly as the reference trainer does them.
void apply_gradient(parameter_shard_state& st, const std::vector<float>& grad) {
  const std::size_t n = st.params.size();
  apply_sgd(st.params.data(), grad.data(), n, learning_rate_at(st.cfg.schedule, st.step));
  update_ema(st.ema.data(), st.params.data(), n, ema_decay_at(st.cfg.ema_decay, st.step));
  ++st.step;
  release_waiters(st);
}

caf::result<std::int64_t> on_init(shard_pointer self, shard_init& init) {
  auto& st = self->state;
  if (init.params.values.size() != init.ema.values.size())
    return caf::make_error(errc::shape_mismatch, "init with params and shadows of unequal size");
  if (st.step >= 0) return st.step;  // already initialised: the cluster keeps its state
  st.ranges = std::move(init.ranges);
  st.params = std::move(init.params.values);
  st.ema = std::move(init.ema.values);
  st.step = init.step;
  for (auto& rp : st.early_pulls) rp.deliver(pull_reply{st.step, tensor{st.params}});
  st.early_pulls.clear();
  release_waiters(st);
  return st.step;
}

caf::result<pull_reply> on_pull(shard_pointer self) {
  auto& st = self->state;
  if (st.step < 0) {  // answered by on_init: workers need not poll
    st.early_pulls.push_back(self->make_response_promise<pull_reply>());
    return st.early_pulls.back();
  }
  return pull_reply{st.step, tensor{st.params}};
}

void on_push(shard_pointer self, const push_msg& m) {
  auto& st = self->state;
  if (auto err = check_push(st, m)) {
    ++st.rejected;
    aout(self) << "parameter_shard " << st.cfg.index << ": rejected a push from worker "
               << m.worker << ": " << self->system().render(err) << std::endl;
    return;
  }
  apply_gradient(st, m.grad.values);
}

caf::result<std::int64_t> on_await(shard_pointer self, std::int64_t target) {
  auto& st = self->state;
  if (st.step >= target) return st.step;
  auto rp = self->make_response_promise<std::int64_t>();
  st.step_waiters.emplace(target, rp);
  return rp;
}

caf::result<std::int64_t> on_hello(shard_pointer self, const std::string& fingerprint) {
  auto& st = self->state;
  auto peer = "ps " + std::to_string(st.cfg.index);
  if (auto diff = fingerprint_difference(fingerprint, st.cfg.fingerprint, peer))
    return caf::make_error(errc::config_mismatch, *diff);
  return st.step;
}

shard_actor::behavior_type parameter_shard(shard_pointer self, shard_config cfg) {
  self->state.cfg = std::move(cfg);
  return {
    [=](hello_atom, const std::string& fp) { return on_hello(self, fp); },
    [=](init_atom, shard_init& init) { return on_init(self, init); },
    [=](pull_atom) { return on_pull(self); },
    [=](push_atom, const push_msg& m) { on_push(self, m); },
    [=](await_atom, std::int64_t target) { return on_await(self, target); },
    [=](snapshot_atom) {
      auto& st = self->state;
      return shard_snapshot{st.step, st.ranges, tensor{st.params}, tensor{st.ema}};
    },
    [=](stop_atom) { self->quit(); },
  };
}

}  // namespace

shard_actor spawn_parameter_shard(caf::actor_system& sys, shard_config cfg) {
  return sys.spawn(parameter_shard, std::move(cfg));
}

}  // namespace downpour
