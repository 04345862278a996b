// Ticket requests after the last ticket: while a push is unanswered its
// ticket may still come back (refused by a shard, or lost with a worker that
// went down), so such a request waits for it instead of hearing -1. A worker
// that heard -1 leaves; a ticket returned after every worker left would have
// no taker, and the shards would stay a step short of the end forever.
// Leased tickets not used yet may come back too: a waiting request recalls
// them (supervisor_leases.cpp).
#include <algorithm>
#include <utility>

#include "actors/stop_supervisor.hpp"
#include "actors/supervisor_state.hpp"

namespace downpour {
namespace {

// Before the promise, which takes the sender out of the current message.
ticket_waiter waiter_of_sender(supervisor_pointer self, std::uint32_t worker, std::int64_t want) {
  return ticket_waiter{caf::actor_cast<caf::actor_addr>(self->current_sender()), worker, want,
                       std::nullopt, std::nullopt};
}

void park(supervisor_pointer self, ticket_waiter w) {
  self->state.ticket_waiters.push_back(std::move(w));
  recall_leases(self);
}

void grant_waiter(stop_supervisor_state& st, ticket_waiter& w, ticket_holder& holder) {
  if (w.ticket) {
    w.ticket->deliver(grant_ticket(st, &holder, w.worker, st.last_loss));
    return;
  }
  const auto lease = grant_lease(st, holder, w.want);
  w.lease->deliver(lease.first, lease.count);
}

void tell_over(ticket_waiter& w) {
  if (w.ticket)
    w.ticket->deliver(std::int64_t{-1});
  else
    w.lease->deliver(std::int64_t{-1}, std::int64_t{0});
}

}  // namespace

std::int64_t grant_ticket(stop_supervisor_state& st, ticket_holder* holder, std::uint32_t worker,
                          float loss) {
  st.active.insert(worker);
  end_pause(st);
  if (holder) ++holder->unsettled;
  if (st.granted > st.cfg.start_step) {
    st.progress->on_step(st.granted, loss);
    st.progress_fed = std::max(st.progress_fed, st.granted);
  }
  return st.granted++;
}

caf::result<std::int64_t> after_last_ticket(supervisor_pointer self, std::uint32_t worker) {
  if (all_settled(self->state)) return std::int64_t{-1};
  auto w = waiter_of_sender(self, worker, 1);
  auto rp = self->make_response_promise<std::int64_t>();
  w.ticket = rp;
  park(self, std::move(w));
  return rp;
}

caf::result<std::int64_t, std::int64_t> after_last_lease(supervisor_pointer self,
                                                         std::uint32_t worker, std::int64_t want) {
  if (all_settled(self->state)) return {std::int64_t{-1}, std::int64_t{0}};
  auto w = waiter_of_sender(self, worker, want);
  auto rp = self->make_response_promise<std::int64_t, std::int64_t>();
  w.lease = rp;
  park(self, std::move(w));
  return rp;
}

void serve_ticket_waiters(supervisor_pointer self) {
  auto& st = self->state;
  auto waiters = std::exchange(st.ticket_waiters, {});
  for (auto& w : waiters) {
    auto holder = st.holders.find(w.holder);
    if (holder == st.holders.end()) continue;  // gone while it waited
    if (next_ticket(st.granted, st.cfg.last_step) >= 0)
      grant_waiter(st, w, holder->second);
    else if (all_settled(st))
      tell_over(w);
    else
      st.ticket_waiters.push_back(std::move(w));
  }
  if (!st.ticket_waiters.empty()) recall_leases(self);
}

void refuse_ticket_waiters(stop_supervisor_state& st, const caf::error& why) {
  for (auto& w : st.ticket_waiters) {
    if (w.ticket)
      w.ticket->deliver(why);
    else
      w.lease->deliver(why);
  }
  st.ticket_waiters.clear();
}

}  // namespace downpour
