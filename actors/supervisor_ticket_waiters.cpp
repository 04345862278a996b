// Ticket requests after the last ticket: while a push is unanswered its
// ticket may still come back (refused by a shard, or lost with a worker that
// went down), so such a request waits for it instead of hearing -1. A worker
// that heard -1 leaves; a ticket returned after every worker left would have
// no taker, and the shards would stay a step short of the end forever.
#include <utility>

#include "actors/stop_supervisor.hpp"
#include "actors/supervisor_state.hpp"

namespace downpour {

std::int64_t grant_ticket(stop_supervisor_state& st, ticket_holder* holder, std::uint32_t worker,
                          float loss) {
  st.active.insert(worker);
  if (holder) ++holder->unsettled;
  if (st.granted > st.cfg.start_step) st.progress->on_step(st.granted, loss);
  return st.granted++;
}

caf::result<std::int64_t> after_last_ticket(supervisor_pointer self, std::uint32_t worker) {
  auto& st = self->state;
  if (all_settled(st)) return std::int64_t{-1};
  // Before the promise, which takes the sender out of the current message.
  auto holder = caf::actor_cast<caf::actor_addr>(self->current_sender());
  auto rp = self->make_response_promise<std::int64_t>();
  st.ticket_waiters.push_back(ticket_waiter{std::move(holder), worker, rp});
  return rp;
}

void serve_ticket_waiters(supervisor_pointer self) {
  auto& st = self->state;
  auto waiters = std::exchange(st.ticket_waiters, {});
  for (auto& w : waiters) {
    auto holder = st.holders.find(w.holder);
    if (holder == st.holders.end()) continue;  // gone while it waited
    if (next_ticket(st.granted, st.cfg.last_step) >= 0)
      w.promise.deliver(grant_ticket(st, &holder->second, w.worker, st.last_loss));
    else if (all_settled(st))
      w.promise.deliver(std::int64_t{-1});
    else
      st.ticket_waiters.push_back(std::move(w));
  }
}

void refuse_ticket_waiters(stop_supervisor_state& st, const caf::error& why) {
  for (auto& w : st.ticket_waiters) w.promise.deliver(why);
  st.ticket_waiters.clear();
}

}  // namespace downpour
