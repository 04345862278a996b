#include "actors/exchange.hpp"

#include <utility>

#include "protocol/failure.hpp"
#include "actors/exchange_state.hpp"

namespace downpour {
namespace {

caf::actor_addr sender_of(exchange_pointer self) {
  return caf::actor_cast<caf::actor_addr>(self->current_sender());
}

// A trainer is seen at its first request, and watched: one that ends is no
// longer waited for.
trainer_load& load_of(exchange_pointer self, const caf::actor_addr& from) {
  auto [it, fresh] = self->state.trainers.try_emplace(from);
  if (fresh) self->monitor(from);
  return it->second;
}

// Every live trainer waits on the exchange: queued here, or blocked at the
// shard. One computing (or never seen yet) will be ready soon.
bool all_waiting(const exchange_state& st) {
  std::size_t waiting = 0;
  for (const auto& [addr, load] : st.trainers)
    if (load.queued > 0 || (load.blocked > 0 && load.quick == 0)) ++waiting;
  return waiting + st.gone >= st.cfg.trainers;
}

bool nothing_queued(const exchange_state& st) {
  return st.pushes.empty() && st.pulls.empty();
}

void arm_timer(exchange_pointer self) {
  auto& st = self->state;
  if (st.timer != 0) return;
  st.timer = ++st.timers;
  self->delayed_send(caf::actor_cast<exchange_actor>(self), st.cfg.gather, tick_atom_v, st.timer);
}

void on_tick(exchange_pointer self, std::uint64_t id) {
  auto& st = self->state;
  if (id != st.timer) return;  // a flush came first
  st.timer = 0;
  if (!nothing_queued(st)) flush(self);
}

// Who asks is read before the promise is made: making it takes the
// request's sender out of the message.
template <class T>
promise_of<T> enqueue(exchange_pointer self, const caf::actor_addr& from) {
  ++load_of(self, from).queued;
  return self->make_response_promise<T>();
}

caf::result<pull_reply> on_pull(exchange_pointer self, std::int64_t min_step,
                                std::optional<row_pull> rows) {
  const auto from = sender_of(self);
  auto rp = enqueue<pull_reply>(self, from);
  self->state.pulls[min_step].push_back(queued_pull{from, std::move(rows), rp});
  maybe_flush(self);
  return rp;
}

template <class T>
caf::result<T> on_push(exchange_pointer self, push_msg& m, std::optional<row_pull> pull) {
  const auto from = sender_of(self);
  auto rp = enqueue<T>(self, from);
  queued_push q{from, std::move(m), std::move(pull), {}, {}};
  if constexpr (std::is_same<T, std::int64_t>::value)
    q.alone = rp;
  else
    q.with_pull = rp;
  self->state.pushes.push_back(std::move(q));
  maybe_flush(self);
  return rp;
}

void on_down(exchange_pointer self, caf::down_msg& dm) {
  auto& st = self->state;
  if (dm.source == st.cfg.shard.address())
    return self->quit(dm.reason ? dm.reason : caf::make_error(errc::stopped));
  if (st.trainers.erase(dm.source) > 0) ++st.gone;
  maybe_flush(self);
}

exchange_actor::behavior_type exchange(exchange_pointer self, exchange_config cfg) {
  end_on_exception(self);
  self->state.cfg = std::move(cfg);
  self->state.guard.install(self);
  self->monitor(self->state.cfg.shard);
  self->set_down_handler([=](caf::down_msg& dm) { on_down(self, dm); });
  return {
      [=](pull_atom, std::int64_t min_step) { return on_pull(self, min_step, std::nullopt); },
      // Replays are for a worker alone on its node with the shard elsewhere:
      // never one behind an exchange, which is on the trainers' node.
      [=](pull_atom, replay_offer& offer) {
        return self->delegate(self->state.cfg.shard, pull_atom_v, offer);
      },
      [=](pull_atom, row_pull& p) { return on_pull(self, p.min_step, std::move(p)); },
      [=](push_atom, push_msg& m) { return on_push<std::int64_t>(self, m, std::nullopt); },
      [=](push_atom, push_pull& x) { return on_push<push_pull_reply>(self, x.push, x.pull); },
      [=](position_atom, std::uint32_t worker) {
        return self->delegate(self->state.cfg.shard, position_atom_v, worker);
      },
      [=](tick_atom, std::uint64_t id) { on_tick(self, id); },
  };
}

}  // namespace

// After every change of who waits for what.
void maybe_flush(exchange_pointer self) {
  auto& st = self->state;
  if (nothing_queued(st)) return;
  if (!all_waiting(st)) return arm_timer(self);
  st.timer = 0;
  flush(self);
}

wait_kind wait_for_pull(const exchange_state& st, std::int64_t min_step) {
  return min_step > st.known_step ? wait_kind::blocked : wait_kind::quick;
}

void count_sent(exchange_state& st, const caf::actor_addr& from, wait_kind kind) {
  auto it = st.trainers.find(from);
  if (it == st.trainers.end()) return;  // gone meanwhile
  --it->second.queued;
  ++(kind == wait_kind::blocked ? it->second.blocked : it->second.quick);
}

void count_answered(exchange_state& st, const caf::actor_addr& from, wait_kind kind) {
  auto it = st.trainers.find(from);
  if (it == st.trainers.end()) return;
  --(kind == wait_kind::blocked ? it->second.blocked : it->second.quick);
}

shard_link spawn_exchange(caf::actor_system& sys, exchange_config cfg) {
  return caf::actor_cast<shard_link>(sys.spawn(exchange, std::move(cfg)));
}

}  // namespace downpour
