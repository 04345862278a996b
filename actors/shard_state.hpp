// The parameter shard's state, shared by its two source files:
// parameter_shard.cpp (the protocol: pulls, init, restore, snapshots, the
// guard) and shard_updates.cpp (applying pushes in each mode). Not part of
// the protocol: only the shard includes it.
#pragma once

#include <chrono>
#include <functional>
#include <cstdint>
#include <map>
#include <set>
#include <optional>
#include <utility>
#include <vector>

#include "protocol/messages.hpp"
#include "protocol/peer_guard.hpp"
#include "actors/shard_config.hpp"
#include "actors/shard_rows.hpp"
#include "model/dense_rules.hpp"
#include "reporting/count_rate.hpp"
#include "reporting/meters.hpp"

namespace downpour {

// A pull waiting for its step: rows, if it asked for some.
struct pull_waiter {
  caf::typed_response_promise<pull_reply> promise;
  std::optional<row_pull> rows;
};

// A reply to a worker held until every live backup acked the update it
// brought (--ps-replicas R > 1): the backups still owing their ack.
struct held_reply {
  std::vector<caf::actor_addr> owing;
  // With the error instead of the reply when a backup refused the update.
  std::function<void(const caf::error&)> deliver;
  caf::error overruled;
};

// Sync, a failover: a round's gradients so far and the step it is for
// (shard_ledger.cpp).
struct held_round {
  shared_tensor sum;
  std::size_t count = 0;
  std::int64_t step = 0;
};

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
  // Sync: pushes for the round in progress that were refused. They count
  // toward its size, so a worker whose pushes are all refused never leaves
  // the others waiting for a gradient that cannot come.
  std::size_t refused_count = 0;
  // Sync: a larger round size told mid-round, taken once that round is done.
  std::optional<std::size_t> next_required;
  std::int64_t dropped = 0;        // sync: stale gradients, never applied
  std::int64_t rejected = 0;       // malformed or non-finite pushes
  std::int64_t replayed = 0;       // pulls answered without parameters
  std::optional<shard_rows> rows;  // a model's sparse variable: this shard's rows
  // The rules of the dense variables in this shard's ranges that are not
  // plain SGD, and their slots; set by the init or restore.
  dense_rules dense;
  // Snapshots' rows, frozen when taken and read page by page by their id.
  std::map<std::uint64_t, row_part> frozen;
  std::uint64_t next_frozen = 1;
  std::optional<row_part> staged;  // pages of the rows of the next init or restore
  // Each worker's read position from its last push taken (or the
  // checkpoint restored), and the position requests waiting for the init.
  std::vector<worker_position> positions;
  std::vector<std::pair<std::uint32_t, caf::typed_response_promise<read_position>>>
      position_waiters;
  std::multimap<std::int64_t, pull_waiter> pull_waiters;
  std::multimap<std::int64_t, caf::typed_response_promise<std::int64_t>> step_waiters;
  std::multimap<std::int64_t, caf::typed_response_promise<shard_snapshot>> snapshot_waiters;
  peer_guard guard;  // control only from the chief, pulls and pushes from members
  nonce_book nonces;  // one per node asking, for its next hello
  // A chief whose hello this fresh shard refused (other settings) and the
  // difference seen from here: its exit then ends this ps with that reason.
  std::optional<std::pair<caf::node_id, std::string>> refused_by;
  caf::strong_actor_ptr chief;  // the supervisor, told of by itself (join_atom)
  // Replication (actors/shard_replicas.cpp): a primary's live backups, the
  // pushes of the message in hand as they came (to forward), and its
  // replies waiting for acks; a backup's primary, the only sender of updates.
  std::vector<shard_actor> backups;
  std::optional<replica_update> outgoing;
  std::size_t verdict_at = 0;  // outgoing's step of the push being taken
  std::map<std::uint64_t, held_reply> held;
  std::uint64_t next_held = 0;
  caf::actor primary;
  // Failover (actors/shard_failover.cpp): the nodes that said hello as a
  // ps keeping a backup here; the actors that pushed since the last fence,
  // and those fenced out (their pushes are of a lost epoch).
  std::set<caf::node_id> replica_nodes;
  std::vector<caf::actor_addr> pushers;
  std::vector<caf::actor_addr> fenced;
  // The chief's connection lost: this ps may have hung past --node-timeout
  // and been failed over, so it takes no push until a chief joins it again.
  bool orphaned = false;
  bool stopping = false;  // told to stop: ends once its backups have
  push_ledger ledger;     // the pushes taken last and owed (shard_ledger.cpp)
  // Sync: the round in progress at the fence; owed, once the plan says
  // another shard completed it: its missing pushes come sent again.
  std::optional<held_round> fenced_round, owed_round;
  // Where this node's /metrics reads staleness and round waits (none in a
  // test's actor system); sync: when the round in progress got its first gradient.
  shard_meter* meter = nullptr;
  std::chrono::steady_clock::time_point round_began;
  // The meter's rows pulled and pushed per second, as status shows them.
  count_rate pulled_rate, pushed_rate;
  static inline const char* name = "parameter_shard";
};

using shard_pointer = shard_actor::stateful_pointer<parameter_shard_state>;

// parameter_shard.cpp

// The parameters as they are now, for a pull: shared, not copied.
pull_reply current_params(const parameter_shard_state& st);

// The same with the rows asked for, or why they cannot be pulled.
caf::expected<pull_reply> current_params(parameter_shard_state& st, const row_pull& p);

// The rows of a pull served, gathered since began; of a push taken, since began.
void meter_rows_pulled(parameter_shard_state& st, std::size_t rows,
                       std::chrono::steady_clock::time_point began);
void meter_rows_pushed(parameter_shard_state& st, std::size_t rows,
                       std::chrono::steady_clock::time_point began);

// shard_stats.cpp

// Starts the rates of keys pulled and pushed at the meter's counts now.
void start_key_rates(parameter_shard_state& st);

// Step, ranges, counters and rates for `downpour status` and /metrics.
shard_stats stats_of(parameter_shard_state& st);

// Answers the pulls, awaits and snapshots the shard's step has reached.
void release_waiters(parameter_shard_state& st);

// The EMA update owed for the current params, done now.
void settle_ema(parameter_shard_state& st);

// shard_pages.cpp

// The rows of a snapshot: the first page in it, the rest frozen for
// row_page_ask when there are more.
void add_snapshot_rows(parameter_shard_state& st, shard_snapshot& snap);

// A further page of a frozen snapshot's rows.
caf::result<row_part> on_row_page(shard_pointer self, const row_page_ask& ask);

// A page of the rows of the next init or restore, kept until it comes.
caf::result<std::uint64_t> on_stage_rows(shard_pointer self, row_part& page);

// An init's or restore's rows: the pages staged before it, then its own.
caf::expected<row_part> staged_with(parameter_shard_state& st, row_part& last);

// shard_updates.cpp

// Every refused push is counted, in every mode and after the last step too;
// an accepted one is applied whole or (job over) not at all. The reply is
// the shard's step: in sync mode a stale gradient is dropped, not an error.
caf::expected<std::int64_t> take_push(shard_pointer self, push_msg& m);

// Async: a push and the next pull of rows in one message (push_pull).
caf::expected<push_pull_reply> on_push_pull(shard_pointer self, push_pull& x);
// The pushes of a process's trainers, each taken as take_push would alone,
// then their merged pull answered as push_pull's is.
caf::expected<push_batch_reply> on_push_batch(shard_pointer self, push_batch& x);
// A merged pull speaks for each trainer it names, a batch for each push's.
bool from_pullers(shard_pointer self, const row_pull& p);
bool from_batch_workers(shard_pointer self, const push_batch& x);

// Sync: applies the round's mean once it has the gradients it needs.
void maybe_complete_round(parameter_shard_state& st);
// The dense update of the mean of `count` gradients summed in sum, with the
// schedule of step `at`, written over sum (then the new parameters); its lr.
float mean_update(parameter_shard_state& st, shared_tensor& sum, std::size_t count,
                  std::int64_t at);
// Sync: the coordinator's round size. A smaller one counts at once (a dead
// worker never holds a round); a larger one from the next round on.
void set_required(parameter_shard_state& st, std::size_t n);

// A state to stand at (a restore's, a new backup's), whatever the shard
// held; why not, if it does not fit.
caf::error take_state(shard_pointer self, shard_init& init);

// actors/shard_members.cpp: the hello of a node (the proof, then the shard's
// index and settings) and the exits that end the shard.
caf::result<std::int64_t> on_hello(shard_pointer self, const hello_msg& m);
void on_exit(shard_pointer self, caf::exit_msg& m);

// shard_replicas.cpp

// The shard's whole state to each backup, rows in pages (a new backup, an
// init, a restore); the pushes sent after it follow it there.
void send_state_to_backups(shard_pointer self);

// A push the primary is about to take, copied as it came for its backups
// (nothing without backups); verdict after the take: refused or not.
void keep_for_backups(parameter_shard_state& st, const push_msg& m,
                      replica_step how = replica_step::taken_push);
void note_verdict(parameter_shard_state& st, bool refused);

// A row pull served, for the backups to remember as the primary does.
void keep_pull_for_backups(parameter_shard_state& st, const row_pull& p);

// The reply to the message in hand: at once without backups (or nothing to
// forward), else once every live backup acked the pushes it brought.
template <class T>
caf::result<T> after_backups(shard_pointer self, caf::expected<T> reply);

// The chief's replica_set; a primary's replica_update; a backup gone.
caf::result<std::int64_t> on_replica_set(shard_pointer self, replica_set& set);
caf::result<std::int64_t> on_replica_update(shard_pointer self, replica_update& u);
void on_down(shard_pointer self, const caf::down_msg& dm);

// A new sync round size, passed on to the backups.
void forward_required(shard_pointer self, std::uint64_t n);

// shard_failover.cpp (--ps-replicas 2 across processes)

// A backup on the sender's node joins this primary; the copy of shard k this
// node hosts; whether the sender of the push in hand may push (not fenced).
caf::result<std::int64_t> on_backup_join(shard_pointer self, caf::actor& backup);
caf::result<caf::actor> on_copy_lookup(shard_pointer self, std::uint32_t k);
bool may_push(shard_pointer self);
caf::error fenced_push();
// A chief's join (its supervisor, at the start and after each recovery).
void on_chief_join(shard_pointer self);
// The chief's failover: fence the workers seen so far and drop the sync
// round in progress; then stand at the step every shard is brought to.
caf::result<fence_report> on_failover_fence(shard_pointer self);
caf::result<std::int64_t> on_failover_step(shard_pointer self, failover_plan& plan);

// shard_ledger.cpp (a failover that loses nothing, protocol/push_ledger.hpp)

// A push taken (async, ssp) at global step `at`, remembered by its seq.
void note_taken(parameter_shard_state& st, const push_msg& m, std::int64_t at);
// A push sent again after a failover: taken before, owed (its part applied
// with the schedule of the step it was taken at elsewhere, the step kept),
// or taken nowhere (fenced). A backup takes its primary's fills the same way.
caf::expected<std::int64_t> take_resent_push(shard_pointer self, push_msg& m);
caf::result<std::int64_t> on_resend(shard_pointer self, push_msg& m);
// Sync, the plan in hand: the round fenced becomes the round owed when
// another shard completed it and this one owes pushes of it; else it goes.
void keep_owed_round(parameter_shard_state& st, const failover_plan& plan);
// The job is over (from the chief, or a backup's primary): the backups on
// other ps end with their primary, so those ps exit too.
void on_stop(shard_pointer self);

// shard_dense.cpp

// The gradients of the dense segments with rules of their own (count > 1:
// a sync round's sum, taken as its mean), saved before the SGD kernel
// writes the new parameters over them; none if the shard has no such segment.
floats segment_gradients(const parameter_shard_state& st, const shared_tensor& grad,
                         std::size_t count);

// next: the SGD kernel's new parameters; each such segment's are replaced
// by its rule's, from the current params and grads (segment_gradients).
void apply_segments(parameter_shard_state& st, shared_tensor& next, const floats& grads,
                    update_moment at);

// The dense rules of the ranges and slots of an init or restore (empty
// slots: their initial value), or why the slots do not fit.
caf::error take_dense(parameter_shard_state& st, const shard_init& init);

// Every waiting pull answered with the parameters as they are now: a sync
// round whose every push was refused takes no step, and its workers push
// again for it.
void answer_pulls_now(parameter_shard_state& st);

// A refused message (push or pull): logged and counted here, and the
// error goes back to the sender as its reply.
caf::error reject(shard_pointer self, caf::error err, const char* what);

}  // namespace downpour
