#include "actors/sync_coordinator.hpp"

#include "protocol/peer_guard.hpp"

#include <map>
#include <set>

#include "protocol/failure.hpp"
#include "model/sync_rule.hpp"

namespace downpour {
namespace {

struct sync_coordinator_state {
  coordinator_config cfg;
  std::map<std::uint32_t, caf::actor_addr> live;      // worker index -> its actor
  std::map<std::uint32_t, std::int64_t> clocks;        // ssp: steps finished, live workers
  std::multimap<std::uint32_t, std::pair<std::int64_t, caf::typed_response_promise<std::int64_t>>>
      waiting;                                          // ssp: workers held at the bound
  std::set<std::uint32_t> gone;                         // joined, then died; not back yet
  std::set<std::uint32_t> finished;                     // left: their data or the job is done
  std::size_t required = 0;                             // last count sent to the shards
  std::set<std::uint32_t> joiners;                      // past the listed workers (--join)
  peer_guard guard;  // joins from nodes the supervisor admitted; exits and errors from this node
  static inline const char* name = "sync_coordinator";
};

using coordinator_pointer = coordinator_actor::stateful_pointer<sync_coordinator_state>;

// Workers past the listed ones (--join) that ever joined: each raises
// replicas_to_aggregate by one while it lives, as a listed worker counts.
std::size_t joined_count(const sync_coordinator_state& st) { return st.joiners.size(); }

// Tells the shards a new round size when the live workers change it. A
// shard takes a larger size from its next round on (never mid-round), a
// smaller one at once, so a dead worker never holds a round.
void update_required(coordinator_pointer self) {
  auto& st = self->state;
  if (st.cfg.mode != train_mode::sync) return;
  // Workers not yet joined count as alive: a round at start-up waits for them.
  const std::size_t members = st.cfg.workers + joined_count(st);
  const std::size_t out = st.gone.size() + st.finished.size();
  const std::size_t alive = members - std::min(members, out);
  const std::size_t joined = members - st.cfg.workers;
  auto n = required_gradients(st.cfg.replicas_to_aggregate + joined, members, alive);
  if (n == st.required) return;
  if (st.required != 0)
    st.cfg.log.info("sync_coordinator: a round now needs " + std::to_string(n) +
                    " gradients (" + std::to_string(alive) + " live workers" +
                    (joined ? ", " + std::to_string(joined) + " joined" : std::string{}) +
                    ")" + (n > st.required ? ", from the next round on" : ""));
  st.required = n;
  for (auto& s : st.cfg.shards) self->send(s, required_atom_v, static_cast<std::uint64_t>(n));
}

// ssp: answer every held worker that the bound now lets through.
void release_admitted(coordinator_pointer self) {
  auto& st = self->state;
  for (auto it = st.waiting.begin(); it != st.waiting.end();) {
    if (may_advance(it->second.first, st.clocks, st.cfg.staleness)) {
      it->second.second.deliver(it->second.first);
      it = st.waiting.erase(it);
    } else {
      ++it;
    }
  }
}

enum class departure { finished, died };

void forget_worker(coordinator_pointer self, std::uint32_t worker, departure how) {
  auto& st = self->state;
  st.live.erase(worker);
  (how == departure::died ? st.gone : st.finished).insert(worker);
  st.clocks.erase(worker);
  update_required(self);
  release_admitted(self);
}

// Sync: a worker that leaves before the others (its passes over the data
// are done) still counts for the round of its last gradient, which must wait
// for the others' gradients; the rounds after it need one gradient fewer.
void on_leave(coordinator_pointer self, std::uint32_t worker, std::int64_t last_round) {
  auto& st = self->state;
  if (st.cfg.mode != train_mode::sync || last_round < 0)
    return forget_worker(self, worker, departure::finished);
  st.live.erase(worker);  // its down is no death
  auto remaining = std::make_shared<std::size_t>(st.cfg.shards.size());
  for (auto& shard : st.cfg.shards)
    self->request(shard, caf::infinite, await_atom_v, last_round + 1)
        .then(
            [=](std::int64_t) {
              if (--*remaining == 0) forget_worker(self, worker, departure::finished);
            },
            [](caf::error&) {});
}

// Leave and clock speak for one worker: only the actor that joined as it
// may send them, not another member on its behalf.
bool from_joined(coordinator_pointer self, std::uint32_t worker, const char* what) {
  auto& st = self->state;
  auto it = st.live.find(worker);
  const auto sender = self->current_sender();
  if (it != st.live.end() && it->second == caf::actor_cast<caf::actor_addr>(sender)) return true;
  st.guard.refuse_on_behalf(what, worker, sender);
  return false;
}

void on_join(coordinator_pointer self, std::uint32_t worker) {
  auto& st = self->state;
  auto sender = self->current_sender();
  if (!sender || !from_member(self, "a join")) return;
  st.live[worker] = caf::actor_cast<caf::actor_addr>(sender);
  if (worker >= st.cfg.workers) st.joiners.insert(worker);
  st.gone.erase(worker);
  st.finished.erase(worker);
  self->monitor(sender);
  st.cfg.log.debug("sync_coordinator: worker " + std::to_string(worker) + " joined");
  if (st.cfg.mode == train_mode::ssp) {
    // A (re)joining worker counts from the slowest live clock, so it neither
    // blocks the others nor runs ahead.
    std::int64_t slowest = -1;
    for (auto& [w, c] : st.clocks)
      if (w != worker && (slowest < 0 || c < slowest)) slowest = c;
    st.clocks[worker] = slowest < 0 ? 0 : slowest;
  }
  update_required(self);
}

// A worker that finished `finished` steps may read for `step` (the step it
// starts, or a pipelined worker's next one) once that step is within the
// bound of the slowest live clock, its own included; the answer is that
// step (counted from the worker's clock as the coordinator holds it).
caf::result<std::int64_t> on_clock(coordinator_pointer self, std::uint32_t worker,
                                   std::int64_t finished, std::int64_t step) {
  if (!from_joined(self, worker, "a clock"))
    return caf::make_error(errc::unauthorized, "a clock for worker " + std::to_string(worker) +
                                                   " from an actor that did not join as it");
  auto& st = self->state;
  if (st.live.count(worker)) st.clocks[worker] = std::max(st.clocks[worker], finished);
  release_admitted(self);
  const std::int64_t clock = st.clocks.count(worker) ? st.clocks[worker] : finished;
  const std::int64_t reading = clock + std::max<std::int64_t>(step - finished, 0);
  if (may_advance(reading, st.clocks, st.cfg.staleness)) return reading;
  auto rp = self->make_response_promise<std::int64_t>();
  st.waiting.emplace(worker, std::make_pair(reading, rp));
  return rp;
}

coordinator_actor::behavior_type sync_coordinator(coordinator_pointer self, coordinator_config cfg) {
  end_on_exception(self);
  self->state.guard.set_log(cfg.log);
  self->state.cfg = std::move(cfg);
  self->state.guard.install(self);
  self->set_down_handler([=](caf::down_msg& dm) {
    if (!from_source(self, dm)) return;
    auto& st = self->state;
    for (auto& [worker, addr] : st.live)
      if (addr == dm.source) {
        st.cfg.log.warn("sync_coordinator: worker " + std::to_string(worker) + " is gone");
        return forget_worker(self, worker, departure::died);
      }
  });
  return {
    [=](hello_atom, const caf::node_id& node) {
      if (from_chief(self, "an admission")) self->state.guard.admit_member(node);
    },
    [=](join_atom, std::uint32_t worker) { on_join(self, worker); },
    [=](leave_atom, std::uint32_t worker) {
      if (from_joined(self, worker, "a leave")) forget_worker(self, worker, departure::finished);
    },
    [=](leave_atom, std::uint32_t worker, std::int64_t last_round) {
      if (from_joined(self, worker, "a leave")) on_leave(self, worker, last_round);
    },
    [=](clock_atom, std::uint32_t worker, std::int64_t finished) {
      return on_clock(self, worker, finished, finished);
    },
    [=](clock_atom, std::uint32_t worker, std::int64_t finished, std::int64_t step) {
      return on_clock(self, worker, finished, step);
    },
    [=](stats_atom) {
      worker_stats ws;
      for (auto& [worker, addr] : self->state.live) ws.live.push_back(worker);
      ws.gone.assign(self->state.gone.begin(), self->state.gone.end());
      return ws;
    },
  };
}

}  // namespace

coordinator_actor spawn_sync_coordinator(caf::actor_system& sys, coordinator_config cfg) {
  return sys.spawn(sync_coordinator, std::move(cfg));
}

}  // namespace downpour
