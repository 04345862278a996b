// A replicated shard's copies (--ps-replicas R > 1, docs/failure-model.md):
// the primary takes each push as before, sends it as it came, with its
// verdict, to every live backup, and holds the reply to the worker until
// each of them acked. Backups take the same pushes in the same order
// (take_push), so every copy stands where the primary stands, bit for bit.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "actors/shard_state.hpp"
#include "protocol/metered_config.hpp"
#include "protocol/row_pages.hpp"

namespace downpour {
namespace {

std::string me(const parameter_shard_state& st) {
  return "parameter_shard " + std::to_string(st.cfg.index);
}

// Replies whose backups have all acked go out, in the order they were held.
void release_acked(parameter_shard_state& st) {
  for (auto it = st.held.begin(); it != st.held.end();) {
    if (!it->second.owing.empty()) {
      ++it;
      continue;
    }
    it->second.deliver(it->second.overruled);
    it = st.held.erase(it);
  }
}

void owed_no_more(parameter_shard_state& st, std::uint64_t id, const caf::actor_addr& backup) {
  auto it = st.held.find(id);
  if (it == st.held.end()) return;
  auto& owing = it->second.owing;
  owing.erase(std::remove(owing.begin(), owing.end(), backup), owing.end());
  release_acked(st);
}

// A backup that refuses its primary's update was promoted in a failover
// this copy missed (its ps hung): the update counts nowhere live, so its
// worker hears errc::fenced, and its node sends it again to the live copy.
void disowned(parameter_shard_state& st, std::uint64_t id) {
  auto it = st.held.find(id);
  if (it != st.held.end()) it->second.overruled = fenced_push();
}

// Every held reply stops waiting for backups not in keep.
void forget_backups_but(parameter_shard_state& st, const std::vector<caf::actor_addr>& keep) {
  for (auto& [id, h] : st.held)
    h.owing.erase(std::remove_if(h.owing.begin(), h.owing.end(),
                                 [&](const caf::actor_addr& a) {
                                   return std::find(keep.begin(), keep.end(), a) == keep.end();
                                 }),
                  h.owing.end());
  if (st.backups.empty()) st.outgoing.reset();
  release_acked(st);
}

std::vector<caf::actor_addr> addresses(const std::vector<shard_actor>& backups) {
  std::vector<caf::actor_addr> out;
  for (const auto& b : backups) out.push_back(b.address());
  return out;
}

// Sends u to every backup; each ack (or failure) pays the held reply id,
// if u brought one (none: the updates after u are held, and follow it there).
void send_to_backups(shard_pointer self, const replica_update& u,
                     std::optional<std::uint64_t> id) {
  for (const auto& b : self->state.backups) {
    const auto addr = b.address();
    auto paid = [=] {
      if (id) owed_no_more(self->state, *id, addr);
    };
    self->request(b, caf::infinite, replica_atom_v, u)
        .then([=](std::int64_t) { paid(); },
              [=](caf::error& err) {
                self->state.cfg.log.warn(me(self->state) + ": a backup failed an update: " +
                                         self->system().render(err));
                if (id && err == errc::unauthorized) disowned(self->state, *id);
                paid();
              });
  }
}

// The pull as the primary served it, remembered; its values go nowhere.
void replay_pull(parameter_shard_state& st, const row_pull& p) {
  if (!st.rows->pull(p)) st.cfg.log.error(me(st) + ": diverged from its primary: a pull it refused");
}

}  // namespace

void keep_for_backups(parameter_shard_state& st, const push_msg& m, replica_step how) {
  if (st.backups.empty()) return;
  if (!st.outgoing) st.outgoing.emplace();
  // The gradient before the update is written over it: its own buffer.
  push_msg copy{m.step, m.worker, shared_tensor{m.grad.values()}, m.keys, m.rows};
  copy.position = m.position;
  copy.seq = m.seq;
  st.outgoing->pushes.push_back(std::move(copy));
  // Its place now: pulls the update releases follow it.
  st.verdict_at = st.outgoing->steps.size();
  st.outgoing->steps.push_back(static_cast<std::uint8_t>(how));
}

void note_verdict(parameter_shard_state& st, bool refused) {
  if (st.outgoing && !st.backups.empty() && refused)
    st.outgoing->steps[st.verdict_at] = static_cast<std::uint8_t>(replica_step::refused_push);
}

void keep_pull_for_backups(parameter_shard_state& st, const row_pull& p) {
  if (st.backups.empty()) return;
  if (!st.outgoing) st.outgoing.emplace();
  st.outgoing->pulls.push_back(p);
  st.outgoing->steps.push_back(static_cast<std::uint8_t>(replica_step::row_pull));
}

template <class T>
caf::result<T> after_backups(shard_pointer self, caf::expected<T> reply) {
  auto& st = self->state;
  if (!st.outgoing || st.backups.empty()) {
    st.outgoing.reset();
    if (reply) return std::move(*reply);
    return std::move(reply.error());
  }
  auto update = std::move(*st.outgoing);
  st.outgoing.reset();
  auto rp = self->make_response_promise<T>();
  auto kept = std::make_shared<caf::expected<T>>(std::move(reply));
  const auto id = st.next_held++;
  st.held.emplace(id, held_reply{addresses(st.backups), [rp, kept](const caf::error& overruled) mutable {
                                   if (overruled)
                                     rp.deliver(overruled);
                                   else if (*kept)
                                     rp.deliver(std::move(**kept));
                                   else
                                     rp.deliver(std::move(kept->error()));
                                 }});
  send_to_backups(self, update, id);
  return rp;
}

template caf::result<std::int64_t> after_backups(shard_pointer, caf::expected<std::int64_t>);
template caf::result<push_pull_reply> after_backups(shard_pointer,
                                                    caf::expected<push_pull_reply>);
template caf::result<push_batch_reply> after_backups(shard_pointer,
                                                     caf::expected<push_batch_reply>);

caf::result<std::int64_t> on_replica_set(shard_pointer self, replica_set& set) {
  auto& st = self->state;
  st.backups.clear();
  for (auto& b : set.backups) {
    auto backup = caf::actor_cast<shard_actor>(b);
    if (!backup || backup == self) continue;
    self->monitor(backup);
    st.backups.push_back(std::move(backup));
  }
  st.primary = std::move(set.primary);
  // The node's /metrics counts a shard's updates once: on its primary.
  auto* meters = meters_of(self->system());
  st.meter = meters && !st.primary ? &meters->shard(st.cfg.index) : nullptr;
  forget_backups_but(st, addresses(st.backups));
  send_state_to_backups(self);
  st.cfg.log.info(me(st) + ": " + (st.primary ? "a backup" : "the primary") + " with " +
                  std::to_string(st.backups.size()) + " backup(s) at global step " +
                  std::to_string(st.step));
  return st.step;
}

caf::result<std::int64_t> on_replica_update(shard_pointer self, replica_update& u) {
  auto& st = self->state;
  const auto sender = self->current_sender();
  if (!st.primary || sender != caf::actor_cast<caf::strong_actor_ptr>(st.primary)) {
    st.guard.refuse("an update not from this copy's primary", sender);
    return unauthorized("replica update");
  }
  for (auto& page : u.pages) on_stage_rows(self, page);
  for (auto& base : u.base)
    if (auto err = take_state(self, base))
      st.cfg.log.error(me(st) + ": cannot take its primary's state: " + self->system().render(err));
  if (u.required != 0) set_required(st, static_cast<std::size_t>(u.required));
  std::size_t push = 0, pull = 0;
  for (const auto step : u.steps) {
    if (static_cast<replica_step>(step) == replica_step::row_pull) {
      if (pull < u.pulls.size() && st.rows) replay_pull(st, u.pulls[pull++]);
      continue;
    }
    if (push >= u.pushes.size()) break;
    if (static_cast<replica_step>(step) == replica_step::filled_push) {
      if (!take_resent_push(self, u.pushes[push++]))
        st.cfg.log.error(me(st) + ": diverged from its primary: a push it filled is not owed here");
      continue;
    }
    const bool refused = !take_push(self, u.pushes[push++]);
    if (refused != (static_cast<replica_step>(step) == replica_step::refused_push))
      st.cfg.log.error(me(st) + ": diverged from its primary: a push it " +
                       (refused ? "refused" : "took") + " was " + (refused ? "taken" : "refused") +
                       " there");
  }
  return after_backups(self, caf::expected<std::int64_t>{st.step});
}

void on_down(shard_pointer self, const caf::down_msg& dm) {
  if (!from_source(self, dm)) return;
  auto& st = self->state;
  if (st.chief && dm.source == caf::actor_cast<caf::actor_addr>(st.chief)) {
    st.orphaned = dm.reason == caf::exit_reason::remote_link_unreachable;
    return;
  }
  const auto before = st.backups.size();
  st.backups.erase(std::remove_if(st.backups.begin(), st.backups.end(),
                                  [&](const shard_actor& b) { return b.address() == dm.source; }),
                   st.backups.end());
  if (st.backups.size() == before) return;
  if (st.stopping) {
    if (st.backups.empty()) self->quit();
    return;
  }
  st.cfg.log.warn(me(st) + ": lost a backup at global step " + std::to_string(st.step) +
                  "; updates are acknowledged without it");
  forget_backups_but(st, addresses(st.backups));
}

void forward_required(shard_pointer self, std::uint64_t n) {
  replica_update u;
  u.required = n;
  send_to_backups(self, u, std::nullopt);
}

// The rows go ahead in pages of their own, as an init's from the chief do:
// no message grows with the rows held.
void send_state_to_backups(shard_pointer self) {
  auto& st = self->state;
  if (st.backups.empty() || st.step < 0) return;
  settle_ema(st);
  shard_init base{st.ranges,           st.step, tensor{st.params.values()}, tensor{st.ema}, {},
                  st.positions, tensor{st.dense.slots()}, st.ledger};
  if (st.rows) {
    row_part all = st.rows->snapshot();
    const std::uint64_t page_rows = rows_per_page(st.cfg.rows);
    const std::uint64_t pages = page_count(all.keys.size(), page_rows);
    for (std::uint64_t p = 0; p + 1 < pages; ++p) {
      replica_update u;
      u.pages.push_back(page_of(all, p, page_rows, st.cfg.rows));
      send_to_backups(self, u, std::nullopt);
    }
    base.rows = pages <= 1 ? std::move(all) : page_of(all, pages - 1, page_rows, st.cfg.rows);
  }
  replica_update u;
  u.base.push_back(std::move(base));
  send_to_backups(self, u, std::nullopt);
}

}  // namespace downpour
