// The stop supervisor's leases (--ticket-lease > 1): a worker takes up to L
// tickets in one request and says how its pushes fared in the next (or in a
// settle tally), so the chief answers one request per L steps. A leased
// ticket counts as unsettled until the worker says its push was answered or
// gives it back unused; lost with its worker it comes back as any unanswered
// push's does (on_worker_down). Once the last tickets are out and a request
// has to wait, or the job stops, the leases are recalled: their unused
// tickets come back and their workers say each answer at once, so the wait
// ends (an ssp worker ahead of the one waiting may be held by the staleness
// bound, and would never use its tickets) and the job still ends, or stops,
// at exactly the step every shard applied.
#include <algorithm>

#include "actors/stop_supervisor.hpp"
#include "actors/supervisor_state.hpp"

namespace downpour {
namespace {

// The same bound as --ticket-lease's (config/convert.cpp): a worker's own
// setting decides its lease, the chief only caps what one request takes.
constexpr std::int64_t max_lease = 4096;

// Answers (some refused, whose tickets go back) and unused tickets given
// back. Never more than the holder has unsettled: a tally from before a
// restore finds a fresh holder, or none.
void apply_tally(stop_supervisor_state& st, ticket_holder& h, const ticket_tally& t) {
  const auto answered = std::clamp<std::int64_t>(t.answered, 0, h.unsettled);
  const auto refused = std::clamp<std::int64_t>(t.refused, 0, answered);
  const auto unused = std::clamp<std::int64_t>(t.unused, 0, h.unsettled - answered);
  h.unsettled -= answered + unused;
  st.cfg.tally->record_applied(answered - refused);
  h.leased = std::clamp<std::int64_t>(h.leased - answered - unused, 0, h.unsettled);
  return_tickets(st, refused + unused);
}

// Progress hears each step once, as the counted step passes it: a lease's
// steps when its worker asks again or says they were pushed.
void feed_progress(stop_supervisor_state& st, float loss) {
  const auto now = counted_step(st);
  for (auto s = std::max(st.progress_fed, st.cfg.start_step) + 1; s <= now; ++s)
    st.progress->on_step(s, loss);
  st.progress_fed = std::max(st.progress_fed, now);
}

// A tally may give tickets back or answer the last pushes: the waiting
// requests and the drain it decides.
void after_tally(supervisor_pointer self) {
  serve_ticket_waiters(self);
  maybe_drain(self);
}

}  // namespace

ticket_range grant_lease(stop_supervisor_state& st, ticket_holder& h, std::int64_t want) {
  const auto n = std::min(std::clamp<std::int64_t>(want, 1, max_lease),
                          st.cfg.last_step - st.granted);
  st.active.insert(h.worker);
  end_pause(st);
  h.unsettled += n;
  h.leased += n;
  h.recalled = false;
  const auto first = st.granted;
  st.granted += n;
  return {first, n};
}

// Its newest lease is used up when a worker asks again (it asks only then):
// those steps count.
caf::result<std::int64_t, std::int64_t> on_lease(supervisor_pointer self, std::uint32_t worker,
                                                 float loss, std::int64_t want,
                                                 const ticket_tally& tally) {
  auto& st = self->state;
  ++st.ticket_requests;
  if (st.life.is(chief_phase::recovering))
    return caf::make_error(errc::recovering, "a ps is down; the cluster is recovering");
  if (st.life.is(chief_phase::failed)) return st.failure;
  auto holder = holder_of_sender(self, worker);
  if (!holder) return unauthorized("an anonymous lease");
  holder->leases = true;
  apply_tally(st, *holder, tally);
  holder->leased = 0;
  if (st.granted > st.cfg.start_step) st.last_loss = loss;  // a worker's first ask has none
  feed_progress(st, st.last_loss);
  after_tally(self);
  if (told_to_stop(st))
    return caf::make_error(errc::interrupted, "the job is stopping (" + st.stop_reason + ")");
  if (next_ticket(st.granted, st.cfg.last_step) < 0) return after_last_lease(self, worker, want);
  const auto lease = grant_lease(st, *holder, want);
  return {lease.first, lease.count};
}

void on_tally(supervisor_pointer self, const ticket_tally& tally) {
  auto& st = self->state;
  ++st.settles;
  auto it = st.holders.find(caf::actor_cast<caf::actor_addr>(self->current_sender()));
  if (it == st.holders.end()) return;  // a worker of before a restore
  apply_tally(st, it->second, tally);
  feed_progress(st, st.last_loss);
  after_tally(self);
}

void recall_leases(supervisor_pointer self) {
  for (auto& [addr, h] : self->state.holders) {
    if (!h.leases || h.recalled || h.unsettled == 0) continue;
    h.recalled = true;
    if (auto w = caf::actor_cast<worker_actor>(addr)) self->send(w, recall_atom_v);
  }
}

}  // namespace downpour
