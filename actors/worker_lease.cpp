// A worker's tickets by the block (--ticket-lease L > 1): one request to the
// supervisor takes up to L tickets, and the steps use them with no message
// until none is left; that request also tells how the pushes since the last
// one fared (ticket_tally), so the chief sees one request per L steps
// instead of a request and a settle per step. A worker that leaves gives its
// unused tickets back; recalled (the last tickets are out and another
// worker waits, or the job stops) it gives them back at once and from then
// on tells each answer as it comes: a request waiting for the last answers
// waits for this worker's. Lost with the worker, they come back through its
// down message (actors/supervisor_leases.cpp).
#include <utility>

#include "actors/worker_state.hpp"

namespace downpour {
namespace {

bool take_leased(worker_state& st) {
  if (st.lease.left == 0) return false;
  st.ticket = st.lease.next++;
  --st.lease.left;
  return true;
}

void on_lease(worker_pointer self, std::int64_t first, std::int64_t count) {
  auto& st = self->state;
  st.lease = count > 1 ? leased_tickets{first + 1, count - 1} : leased_tickets{};
  ticket_in(self, count > 0 ? first : std::int64_t{-1});
}

bool from_supervisor(worker_pointer self) {
  return caf::actor_cast<caf::actor_addr>(self->current_sender()) ==
         caf::actor_cast<caf::actor_addr>(self->state.cfg.supervisor);
}

}  // namespace

// Taken from the lease, the ticket is in at once; the caller goes on to the
// pulls and the compute, which push once they are done.
void lease_ticket(worker_pointer self) {
  auto& st = self->state;
  if (take_leased(st)) return;
  const auto told = std::exchange(st.tally, ticket_tally{});
  self->request(st.cfg.supervisor, caf::infinite, lease_atom_v, st.cfg.index, st.last_loss,
                st.cfg.ticket_lease, told)
      .then([=](std::int64_t first, std::int64_t count) { on_lease(self, first, count); },
            [=](caf::error& err) { request_failed(self, "ticket request failed", err); });
}

void tally_push(worker_pointer self, std::int64_t refused) {
  auto& st = self->state;
  ++st.tally.answered;
  if (refused > 0) ++st.tally.refused;
  if (!st.recalled) return;
  self->send(st.cfg.supervisor, settle_atom_v, st.cfg.index, std::exchange(st.tally, ticket_tally{}));
}

void give_back(worker_pointer self) {
  auto& st = self->state;
  auto t = std::exchange(st.tally, ticket_tally{});
  t.unused = std::exchange(st.lease, leased_tickets{}).left;
  if (t.answered == 0 && t.unused == 0) return;
  self->send(st.cfg.supervisor, settle_atom_v, st.cfg.index, t);
}

void on_recall(worker_pointer self) {
  if (!from_supervisor(self)) return self->state.guard.refuse("a recall", self->current_sender());
  self->state.recalled = true;
  give_back(self);
}

}  // namespace downpour
