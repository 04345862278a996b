// The stop supervisor's state and the functions its parts share. Not part of
// the protocol: only the supervisor's own files include it.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "protocol/peer_guard.hpp"
#include "actors/chief_phase.hpp"
#include "actors/supervisor_config.hpp"

namespace downpour {

struct ticket_holder {
  std::uint32_t worker = 0;
  // Tickets handed out and neither spent (every shard answered the push) nor
  // given back: unanswered pushes and, leased, tickets not used yet.
  std::int64_t unsettled = 0;
  // Leased (lease_atom): of them, the newest lease's, which the worker may not
  // have used yet; progress and status count them once it asks again.
  std::int64_t leased = 0;
  bool leases = false;    // asks with lease_atom: recalled when others wait
  bool recalled = false;  // told to give back its unused tickets since its newest lease
};

// A ticket request after the last ticket while some push is unanswered: that
// push may yet be refused or lost with its worker, and its ticket come back.
// A lease request waits the same way and gets what came back, up to `want`.
struct ticket_waiter {
  caf::actor_addr holder;
  std::uint32_t worker = 0;
  std::int64_t want = 1;
  std::optional<caf::typed_response_promise<std::int64_t>> ticket;  // asked with ticket_atom
  std::optional<caf::typed_response_promise<std::int64_t, std::int64_t>> lease;  // lease_atom
};

// Tickets first, first + 1, ... first + count - 1 (a lease).
struct ticket_range {
  std::int64_t first = 0;
  std::int64_t count = 0;
};

struct stop_supervisor_state {
  supervisor_config cfg;
  // Its part of the chief's lifecycle (actors/chief_phase.hpp draws it).
  chief_lifecycle life{chief_phase::training};
  // Tickets and the end (supervisor_tickets.cpp).
  std::int64_t granted = 0;  // tickets handed out, counted from step 0
  std::set<std::uint32_t> active;
  // Worker actors (monitored) and their tickets whose pushes not every shard
  // has answered yet: a push lost with its worker or refused gives it back.
  std::map<caf::actor_addr, ticket_holder> holders;
  std::vector<ticket_waiter> ticket_waiters;
  std::set<std::uint32_t> finished;  // said done: their passes over the data are over
  std::int64_t final_step = -1;  // told with the end (stopping_nodes)
  std::vector<caf::typed_response_promise<std::int64_t, float, std::string>> end_waiters;
  std::string stop_reason;  // why the job stops early; empty: it runs to last_step
  caf::error failure;       // why it failed: every end and ticket request gets it then
  std::int64_t bad_batches = 0;
  // What the workers asked of the chief (the end's debug line): ticket and
  // lease requests, and settle messages.
  std::int64_t ticket_requests = 0;
  std::int64_t settles = 0;
  // Progress and status (supervisor_status.cpp).
  std::int64_t reported_step = 0;
  std::int64_t progress_fed = 0;  // the highest step progress heard of (counted_step)
  float last_loss = 0.0f;
  std::optional<validation_facts> validation;  // the newest, for status
  std::unique_ptr<progress_reporter> progress;
  // A ps went down (recovering): no tickets, joining nodes wait, until the
  // chief restores every shard. The epoch tells answers of the old shards
  // and helpers from new ones (supervisor_recovery.cpp).
  std::int64_t epoch = 0;
  // Since the chief learnt a ps went down, until the first step after the
  // restore (or the end): the failover pause (update_tally).
  std::optional<std::chrono::steady_clock::time_point> paused_since;
  // The ps serving each shard: k at first, the ps of its backup after a
  // failover (--ps-replicas 2); workers ask for it when they join.
  std::vector<std::uint32_t> hosts;
  std::vector<caf::typed_response_promise<std::int64_t, coordinator_actor>> held_hellos;
  // Worker nodes that joined with --join: task index -> node (supervisor_members.cpp).
  std::map<std::uint32_t, caf::node_id> joined;
  peer_guard guard;  // workers that said hello; the rest only from this node
  nonce_book nonces;  // one per node asking, for its next hello
  static inline const char* name = "stop_supervisor";
};

using supervisor_pointer = supervisor_actor::stateful_pointer<stop_supervisor_state>;

// The end is told or the job failed: the supervisor's walk is over.
inline bool walk_over(const stop_supervisor_state& st) {
  return st.life.is(chief_phase::stopping_nodes) || st.life.is(chief_phase::failed);
}

inline bool told_to_stop(const stop_supervisor_state& st) {
  return !st.stop_reason.empty();
}

// Every shard answered every push of every ticket handed out.
inline bool all_settled(const stop_supervisor_state& st) {
  for (auto& h : st.holders)
    if (h.second.unsettled > 0) return false;
  return true;
}

// The steps whose pushes every shard answered: tickets handed out less the
// unsettled ones (sync: the rounds reported).
inline std::int64_t settled_step(const stop_supervisor_state& st) {
  if (st.cfg.mode == train_mode::sync) return st.reported_step;
  auto step = st.granted;
  for (auto& h : st.holders) step -= h.second.unsettled;
  return step;
}

// A step is taken after a restore (or the job ends): the pause since the
// ps went down is over.
inline void end_pause(stop_supervisor_state& st) {
  if (!st.paused_since || st.life.is(chief_phase::recovering)) return;
  st.cfg.tally->record_failover_pause(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - *st.paused_since).count());
  st.paused_since.reset();
}

// The global step as progress and status count it: tickets handed out, less
// the newest leases, which may not be used yet.
inline std::int64_t counted_step(const stop_supervisor_state& st) {
  auto step = st.granted;
  for (auto& h : st.holders) step -= h.second.leased;
  return step;
}

// supervisor_ticket_waiters.cpp
std::int64_t grant_ticket(stop_supervisor_state& st, ticket_holder* holder, std::uint32_t worker,
                          float loss);
// Up to want tickets, as many as are left (at least one must be).
ticket_range grant_lease(stop_supervisor_state& st, ticket_holder& holder, std::int64_t want);
// Past the last ticket: -1 once every push is answered, else the request
// waits for a ticket that comes back or for the last answer.
caf::result<std::int64_t> after_last_ticket(supervisor_pointer self, std::uint32_t worker);
caf::result<std::int64_t, std::int64_t> after_last_lease(supervisor_pointer self,
                                                         std::uint32_t worker, std::int64_t want);
// A ticket came back or a push was answered: the waiting requests it decides.
void serve_ticket_waiters(supervisor_pointer self);
// Stopping, failed or recovering: every waiting request gets the reason.
void refuse_ticket_waiters(stop_supervisor_state& st, const caf::error& why);

// supervisor_leases.cpp
caf::result<std::int64_t, std::int64_t> on_lease(supervisor_pointer self, std::uint32_t worker,
                                                 float loss, std::int64_t want,
                                                 const ticket_tally& tally);
void on_tally(supervisor_pointer self, const ticket_tally& tally);
// Others wait for tickets, or the job stops: leases not recalled since
// they were handed out are asked back.
void recall_leases(supervisor_pointer self);

// supervisor_tickets.cpp
caf::result<std::int64_t> on_ticket(supervisor_pointer self, std::uint32_t worker, float loss);
// The sender's holder entry, made (and the sender monitored) at its first request.
ticket_holder* holder_of_sender(supervisor_pointer self, std::uint32_t worker);
// Tickets whose pushes were refused or lost, or leased and not used: the next asks get them.
void return_tickets(stop_supervisor_state& st, std::int64_t n);
// Once every push is out and the end is asked for: every shard is asked to confirm.
void maybe_drain(supervisor_pointer self);
void on_done(supervisor_pointer self, std::uint32_t worker);
void on_settle(supervisor_pointer self, std::int64_t refused);
void on_worker_down(supervisor_pointer self, const caf::down_msg& dm);
void on_stop(supervisor_pointer self, const std::string& why);
caf::result<std::int64_t> on_bad_batch(supervisor_pointer self, std::uint32_t worker,
                                       std::int64_t step, float loss);
caf::result<std::int64_t, float, std::string> on_end(supervisor_pointer self);
// Training or stopping again after a restore: drains once every push is
// out; sync, stopping, takes the stop checkpoint ahead of shard 0.
void go_on(supervisor_pointer self);

// supervisor_recovery.cpp
caf::result<std::int64_t, coordinator_actor> on_hello(supervisor_pointer self,
                                                      const hello_msg& m);
void on_shard_down(supervisor_pointer self, std::size_t k);
caf::result<std::int64_t> on_restore(supervisor_pointer self, recovery_plan& plan);
// A shard took its part of a push a failover made it owe.
void on_filled(supervisor_pointer self, std::uint64_t seq);

// supervisor_members.cpp
caf::result<std::uint32_t> on_join_request(supervisor_pointer self, const hello_msg& m);
// Whether a remote node may say hello as this task: a listed one, or the one
// a join assigned to that node. A refusal is logged.
bool may_hello_as(supervisor_pointer self, std::uint32_t task, const caf::node_id& node);

// supervisor_status.cpp
void on_report(supervisor_pointer self, std::int64_t step, float loss);
void on_eval(supervisor_pointer self, std::int64_t step, double accuracy, double ema_accuracy);
caf::result<std::string> on_status(supervisor_pointer self);

}  // namespace downpour
