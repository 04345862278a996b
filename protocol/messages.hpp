// Every message, atom and typed handle of Downpour, in one type-ID block
// (the error codes: protocol/errc.hpp). Tensors travel as raw blobs: CAF
// 0.17's element-wise float serializer is slow, corrupts NaN and hangs on
// +inf (shared notes, caf-0.17).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "protocol/hello.hpp"
#include "protocol/errc.hpp"
#include "protocol/key_list.hpp"
#include "protocol/push_ledger.hpp"
#include "protocol/push_messages.hpp"
#include "protocol/row_messages.hpp"
#include "protocol/status_messages.hpp"
#include "protocol/tensor.hpp"
#include "protocol/ticket_tally.hpp"
#include "caf/all.hpp"
#include "data/read_position.hpp"

namespace downpour {

// Chief -> shard: the ranges it owns (offset/size pairs), the step to start
// from, and initial parameters and EMA shadows; the workers' read
// positions of the checkpoint restored (none for a fresh job).
struct shard_init {
  std::vector<std::uint64_t> ranges;
  std::int64_t step = 0;
  tensor params;
  tensor ema;
  row_part rows;
  std::vector<worker_position> positions;
  // The optimizer slots of the dense variables with rules of their own, in
  // the shard's order (model/dense_rules.hpp); empty: their initial value.
  tensor slots;
  // A backup's: its primary's pushes taken last and owed (failover).
  push_ledger ledger;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, shard_init& x) {
  return metered(f, peer_kind::chief, [&] {
    row_part_fields rows{x.rows};
    return f(caf::meta::type_name("shard_init"), x.ranges, x.step, x.params, x.ema, rows,
             x.positions, x.slots, x.ledger);
  });
}

// Shard -> chief: everything needed to evaluate or checkpoint the shard, and
// the pushes it refused (stale in sync mode, or malformed).
struct shard_snapshot {
  std::int64_t step = 0;
  std::vector<std::uint64_t> ranges;
  tensor params;
  tensor ema;
  std::int64_t dropped = 0;
  std::int64_t rejected = 0;
  std::int64_t replayed = 0;  // pulls answered without parameters (replay_offer)
  row_part rows;              // the first page of the sparse variable's rows this shard holds
  std::uint64_t frozen = 0;     // the shard's id of the frozen rows (row_page_ask)
  std::uint64_t row_pages = 0;  // pages of rows in all (protocol/row_pages.hpp)
  // Each worker's read position as of the last push the shard took from it.
  std::vector<worker_position> positions;
  tensor slots;  // the dense variables' slots, as shard_init's
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, shard_snapshot& x) {
  return metered(f, peer_kind::chief, [&] {
    row_part_fields rows{x.rows};
    return f(caf::meta::type_name("shard_snapshot"), x.step, x.ranges, x.params, x.ema,
             x.dropped, x.rejected, x.replayed, rows, x.frozen, x.row_pages, x.positions,
             x.slots);
  });
}

// Chief -> shard: a further page of a snapshot's rows, frozen when it was taken.
struct row_page_ask {
  std::uint64_t frozen = 0;
  std::uint64_t page = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, row_page_ask& x) {
  return f(caf::meta::type_name("row_page_ask"), x.frozen, x.page);
}

}  // namespace downpour

// After shard_init: a new backup's first update carries its primary's state.
#include "protocol/replica_messages.hpp"

CAF_ADD_ATOM(downpour, downpour, hello_atom, "hello")
CAF_ADD_ATOM(downpour, downpour, init_atom, "init")
CAF_ADD_ATOM(downpour, downpour, pull_atom, "pull")
CAF_ADD_ATOM(downpour, downpour, push_atom, "push")
CAF_ADD_ATOM(downpour, downpour, await_atom, "await")
CAF_ADD_ATOM(downpour, downpour, snapshot_atom, "snapshot")
CAF_ADD_ATOM(downpour, downpour, stop_atom, "stop")
CAF_ADD_ATOM(downpour, downpour, ticket_atom, "ticket")
CAF_ADD_ATOM(downpour, downpour, done_atom, "done")
CAF_ADD_ATOM(downpour, downpour, start_atom, "start")
CAF_ADD_ATOM(downpour, downpour, end_atom, "end")
CAF_ADD_ATOM(downpour, downpour, join_atom, "join")
CAF_ADD_ATOM(downpour, downpour, leave_atom, "leave")
CAF_ADD_ATOM(downpour, downpour, clock_atom, "clock")
CAF_ADD_ATOM(downpour, downpour, required_atom, "required")
CAF_ADD_ATOM(downpour, downpour, report_atom, "report")
CAF_ADD_ATOM(downpour, downpour, save_atom, "save")
CAF_ADD_ATOM(downpour, downpour, tick_atom, "tick")
CAF_ADD_ATOM(downpour, downpour, stats_atom, "stats")
CAF_ADD_ATOM(downpour, downpour, status_atom, "status")
CAF_ADD_ATOM(downpour, downpour, eval_atom, "eval")
CAF_ADD_ATOM(downpour, downpour, restore_atom, "restore")
CAF_ADD_ATOM(downpour, downpour, diverged_atom, "diverged")
CAF_ADD_ATOM(downpour, downpour, settle_atom, "settle")
CAF_ADD_ATOM(downpour, downpour, challenge_atom, "challenge")
CAF_ADD_ATOM(downpour, downpour, position_atom, "position")
CAF_ADD_ATOM(downpour, downpour, lease_atom, "lease")
CAF_ADD_ATOM(downpour, downpour, recall_atom, "recall")
CAF_ADD_ATOM(downpour, downpour, replica_atom, "replica")
CAF_ADD_ATOM(downpour, downpour, failover_atom, "failover")
CAF_ADD_ATOM(downpour, downpour, resend_atom, "resend")
CAF_ADD_ATOM(downpour, downpour, filled_atom, "filled")
CAF_ADD_ATOM(downpour, downpour, keep_atom, "keep")

namespace downpour {

// A parameter shard: owns ranges of the flat parameter buffer and their EMA.
using shard_actor = caf::typed_actor<
    // A nonce for the caller's next hello (protocol/hello.hpp); open to anyone.
    caf::replies_to<challenge_atom>::with<std::string>,
    // The caller's hello -> the shard's global step (-1 before init). Nothing
    // else from a remote node is served before its hello.
    caf::replies_to<hello_atom, hello_msg>::with<std::int64_t>,
    // Initial values or a restore -> the step the shard now stands at.
    caf::replies_to<init_atom, shard_init>::with<std::int64_t>,
    // A page of the rows of the next init or restore, kept until it comes
    // (its own rows are the last page) -> the rows staged so far.
    caf::replies_to<init_atom, row_part>::with<std::uint64_t>,
    // Recovery: overwrite whatever the shard holds (pending awaits and snapshots
    // fail) -> the step the shard now stands at.
    caf::replies_to<restore_atom, shard_init>::with<std::int64_t>,
    // Parameters and step, answered once the step is at least min_step (sync
    // mode's token barrier: no polling) and the shard is initialised.
    caf::replies_to<pull_atom, std::int64_t>::with<pull_reply>,
    // A pull that spares the transfer when the offer matches the shard's last
    // update (async/ssp, between nodes); otherwise the parameters as now.
    caf::replies_to<pull_atom, replay_offer>::with<pull_reply>,
    // A model with a sparse variable: as the first pull, plus the rows asked for.
    caf::replies_to<pull_atom, row_pull>::with<pull_reply>,
    // One gradient: async/ssp apply it at once; sync accumulates fresh ones and
    // applies their mean once per round -> the shard's step, or the reason it
    // was refused (wrong length, future stamp, NaN/inf, before init).
    caf::replies_to<push_atom, push_msg>::with<std::int64_t>,
    // Async, a model with a sparse variable: a push and the next pull at once.
    caf::replies_to<push_atom, push_pull>::with<push_pull_reply>,
    // The pushes of a worker process's trainers ready together (--trainers).
    caf::replies_to<push_atom, push_batch>::with<push_batch_reply>,
    // From the chief: this copy's backups and primary (--ps-replicas R > 1)
    // -> the shard's step. A primary's push replies wait for its backups.
    caf::replies_to<replica_atom, replica_set>::with<std::int64_t>,
    // From this copy's primary: the pushes it took, to take the same way
    // -> the shard's step after them (the primary's ack).
    caf::replies_to<replica_atom, replica_update>::with<std::int64_t>,
    // From a ps that said hello as a replica: the backup of this shard on
    // its node joins (paid in full state first) -> the shard's step.
    caf::replies_to<replica_atom, caf::actor>::with<std::int64_t>,
    // The copy of shard k this node hosts as a backup (members only): a
    // handle asked of its own node, never relayed (CAF 0.17 routes those
    // through the relaying node).
    caf::replies_to<replica_atom, std::uint32_t>::with<caf::actor>,
    // From the chief, a failover: refuse pushes of every worker seen so
    // far (theirs are of the lost epoch) and drop the sync round in
    // progress -> the step the shard stands at and the pushes it took last.
    caf::replies_to<failover_atom>::with<fence_report>,
    // From the chief, after the fence: stand at the plan's global step and
    // owe its pushes (protocol/push_ledger.hpp) -> the step.
    caf::replies_to<failover_atom, failover_plan>::with<std::int64_t>,
    // From a worker's node after a failover: a push its trainer had no
    // answer to. Taken already -> the step; owed -> its part applied, the
    // step; neither (no shard took it: its ticket is trained again) -> fenced.
    caf::replies_to<resend_atom, push_msg>::with<std::int64_t>,
    // Sync mode: the number of fresh gradients that completes a round.
    caf::reacts_to<required_atom, std::uint64_t>,
    // Answers when the shard has applied this many updates.
    caf::replies_to<await_atom, std::int64_t>::with<std::int64_t>,
    // Parameters, shadows and step as they are now (the end of a job).
    caf::replies_to<snapshot_atom>::with<shard_snapshot>,
    // The same, captured right after this step's update: every shard at the
    // same step, so a checkpoint is the model after exactly that global step.
    caf::replies_to<snapshot_atom, std::int64_t>::with<shard_snapshot>,
    // A further page of a snapshot's rows (its row_pages and frozen say how
    // many and where); the frozen copy is dropped after its last page.
    caf::replies_to<snapshot_atom, row_page_ask>::with<row_part>,
    // Step, ranges and counters for `downpour status`.
    caf::replies_to<stats_atom>::with<shard_stats>,
    // A worker starting (or starting again): where its streamed input
    // stood at its last push here, or at the checkpoint restored (a
    // default position: none), once the shard is initialised.
    caf::replies_to<position_atom, std::uint32_t>::with<read_position>,
    // The job is over: quit (a ps node exits when its shard is gone).
    caf::reacts_to<stop_atom>,
    // From the chief's supervisor: it is where a stop request on this ps goes.
    caf::reacts_to<join_atom>,
    // A stop request on this ps (a signal), passed on to the chief's
    // supervisor, which stops the job with a checkpoint; none known: quit.
    caf::reacts_to<stop_atom, std::string>>;

// What a worker asks of a shard: the shard itself, or (--trainers K > 1)
// the exchange that merges the requests of its process's trainers.
using shard_link = caf::typed_actor<
    caf::replies_to<pull_atom, std::int64_t>::with<pull_reply>,
    caf::replies_to<pull_atom, replay_offer>::with<pull_reply>,
    caf::replies_to<pull_atom, row_pull>::with<pull_reply>,
    caf::replies_to<push_atom, push_msg>::with<std::int64_t>,
    caf::replies_to<push_atom, push_pull>::with<push_pull_reply>,
    caf::replies_to<position_atom, std::uint32_t>::with<read_position>>;

// The sync coordinator on the chief: watches workers (a dead one lowers the
// sync round's required count) and enforces the ssp staleness bound.
using coordinator_actor = caf::typed_actor<
    // From the supervisor: a node whose hello matched; its workers may join.
    caf::reacts_to<hello_atom, caf::node_id>,
    // A worker starts (or restarts with its task index); it is monitored.
    caf::reacts_to<join_atom, std::uint32_t>,
    // A worker has finished the job (only from the actor that joined as it).
    caf::reacts_to<leave_atom, std::uint32_t>,
    // Sync: a worker leaves after its gradient for this round (its passes
    // over the data are done); rounds after it need one gradient fewer.
    caf::reacts_to<leave_atom, std::uint32_t, std::int64_t>,
    // ssp: worker and the steps it has finished -> answered once it may start
    // another (only to the actor that joined as it).
    caf::replies_to<clock_atom, std::uint32_t, std::int64_t>::with<std::int64_t>,
    // ssp, pipelined: the same, answered once it may read for `step` (after
    // the steps finished): the next batch's rows, before this one is pushed.
    caf::replies_to<clock_atom, std::uint32_t, std::int64_t, std::int64_t>::with<std::int64_t>,
    // The live and the dead workers.
    caf::replies_to<stats_atom>::with<worker_stats>>;

// The checkpoint saver on the chief: pulls a consistent snapshot from the
// shards and writes it, so no shared file system is needed.
using saver_actor = caf::typed_actor<
    // Save the model as it stands right after at least this global step -> the file written.
    caf::replies_to<save_atom, std::int64_t>::with<std::string>,
    // Timer: a timed checkpoint is due.
    caf::reacts_to<tick_atom>,
    // The newest checkpoint written (empty: none yet) and its unix time.
    caf::replies_to<stats_atom>::with<std::string, double>>;

// Chief -> its supervisor after a recovery: every shard restored to step,
// with the (possibly new) shard handles and freshly spawned helpers.
// How the shards came back: restored from a checkpoint, or the backups of
// the lost ones promoted (--ps-replicas 2: nothing rolled back).
enum class recovery_kind : std::uint8_t { rollback = 0, failover = 1 };

struct recovery_plan {
  std::int64_t step = 0;
  std::vector<shard_actor> shards;
  coordinator_actor coordinator;
  saver_actor saver;
  std::vector<std::uint32_t> hosts;  // the ps serving each shard (a failover moves one)
  std::int64_t lost = 0;             // updates lost: rolled back, or taken by a lost primary alone
  recovery_kind kind = recovery_kind::rollback;
  // A failover's pushes owed (seq, shards owing it): lost until filled.
  std::vector<std::pair<std::uint64_t, std::uint32_t>> owed;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, recovery_plan& x) {
  return f(caf::meta::type_name("recovery_plan"), x.step, x.shards, x.coordinator, x.saver,
           x.hosts, x.lost, x.kind, x.owed);
}

// The stop-at-step supervisor on the chief: hands out exactly last_step
// step tickets, so the final global step is exact, and ends the job.
using supervisor_actor = caf::typed_actor<
    // A nonce for the caller's next hello; open to anyone.
    caf::replies_to<challenge_atom>::with<std::string>,
    // A joining node's hello -> the current global step and the coordinator.
    caf::replies_to<hello_atom, hello_msg>::with<std::int64_t, coordinator_actor>,
    // --join: a node not in --worker-hosts asks to join, its hello naming
    // worker hello_msg::joining -> the task index it is to say hello as.
    caf::replies_to<join_atom, hello_msg>::with<std::uint32_t>,
    // Worker index and its last loss -> the global step its next push makes, or -1: stop.
    caf::replies_to<ticket_atom, std::uint32_t, float>::with<std::int64_t>,
    // --ticket-lease > 1: worker index, its last loss, the tickets it wants
    // (its lease) and its pushes answered since it last said -> the first
    // ticket and how many follow it (first -1, none: stop).
    caf::replies_to<lease_atom, std::uint32_t, float, std::int64_t, ticket_tally>::with<
        std::int64_t, std::int64_t>,
    // --ticket-lease > 1: a worker's pushes answered, and unused tickets given back.
    caf::reacts_to<settle_atom, std::uint32_t, ticket_tally>,
    // A worker has pushed its last gradient and quits.
    caf::reacts_to<done_atom, std::uint32_t>,
    // Async/ssp: every shard answered a worker's push (worker index, shards
    // that refused it): a push refused anywhere gives its ticket back.
    caf::reacts_to<settle_atom, std::uint32_t, std::int64_t>,
    // Sync mode: worker, the global step its push was for, and its loss (progress).
    caf::reacts_to<report_atom, std::uint32_t, std::int64_t, float>,
    // Answers once every push is applied: the final global step, the last loss
    // and why the job ended early (empty: it reached last_step). Stopped, the
    // checkpoint at that step is written first; diverged: errc::diverged.
    caf::replies_to<end_atom>::with<std::int64_t, float, std::string>,
    // Stop the job (a signal, on the chief or a ps), saying why: no more steps,
    // a checkpoint at the step where it stopped, then end_atom is answered.
    caf::reacts_to<stop_atom, std::string>,
    // A worker's loss or gradient at this global step is not finite: the answer
    // is the number of bad batches so far (skip it, take the next batch) or
    // errc::diverged once more than --max-bad-batches.
    caf::replies_to<diverged_atom, std::uint32_t, std::int64_t, float>::with<std::int64_t>,
    // From the evaluator: global step, validation accuracy raw and EMA (metrics.csv).
    caf::reacts_to<eval_atom, std::int64_t, double, double>,
    // Members: the ps serving each shard now (--ps-replicas 2: a failover
    // moves a shard to the ps that held its backup).
    caf::replies_to<replica_atom>::with<std::vector<std::uint32_t>>,
    // `downpour status` and the metrics endpoint: the job's state as JSON (reporting/status_json.hpp).
    caf::replies_to<status_atom>::with<std::string>,
    // From the chief after a lost ps came back: resume at the restored step -> that step.
    caf::replies_to<restore_atom, recovery_plan>::with<std::int64_t>,
    // From a shard of the job: it took its part of a push it owed after a
    // failover (its seq); one owed nowhere else any more is no longer lost.
    caf::reacts_to<filled_atom, std::uint64_t>>;

// The evaluator on the chief: every eval_every global steps it evaluates a
// snapshot on the validation split, off the training path.
using evaluator_actor = caf::typed_actor<
    // Evaluate at the next multiple of eval_every after this step.
    caf::reacts_to<eval_atom, std::int64_t>>;

// A worker node's keeper of its trainers' unanswered pushes (--ps-replicas
// 2): they outlive the trainers a lost ps ends (actors/push_keeper.hpp).
using push_keeper_actor = caf::typed_actor<
    // A push to keep until the shards are placed again.
    caf::reacts_to<keep_atom, kept_push>,
    // Every push kept, handed over (none are kept after).
    caf::replies_to<keep_atom>::with<std::vector<kept_push>>>;

// A worker: pull -> compute -> push until the supervisor says stop.
using worker_actor = caf::typed_actor<
    // Begin training.
    caf::reacts_to<start_atom>,
    // Leave the job after the step in hand (a signal): its ticket is used, not lost.
    caf::reacts_to<stop_atom>,
    // From the supervisor: give leased tickets back unused and say every
    // push answered at once from now on (the last tickets are out, or the
    // job stops).
    caf::reacts_to<recall_atom>>;

}  // namespace downpour

// One type-ID block: the wire names of everything sent between nodes.
CAF_BEGIN_TYPE_ID_BLOCK(downpour, caf::first_custom_type_id)
CAF_ADD_TYPE_ID(downpour, (downpour::tensor))
CAF_ADD_TYPE_ID(downpour, (downpour::shard_init))
CAF_ADD_TYPE_ID(downpour, (downpour::pull_reply))
CAF_ADD_TYPE_ID(downpour, (downpour::replay_offer))
CAF_ADD_TYPE_ID(downpour, (downpour::push_msg))
CAF_ADD_TYPE_ID(downpour, (downpour::push_pull))
CAF_ADD_TYPE_ID(downpour, (downpour::push_pull_reply))
CAF_ADD_TYPE_ID(downpour, (downpour::shard_snapshot))
CAF_ADD_TYPE_ID(downpour, (downpour::coordinator_actor))
CAF_ADD_TYPE_ID(downpour, (downpour::shard_stats))
CAF_ADD_TYPE_ID(downpour, (downpour::worker_stats))
CAF_ADD_TYPE_ID(downpour, (downpour::recovery_plan))
CAF_ADD_TYPE_ID(downpour, (downpour::key_list))
CAF_ADD_TYPE_ID(downpour, (downpour::row_part))
CAF_ADD_TYPE_ID(downpour, (downpour::row_pull))
CAF_ADD_TYPE_ID(downpour, (downpour::row_page_ask))
CAF_ADD_TYPE_ID(downpour, (downpour::hello_msg))
CAF_ADD_TYPE_ID(downpour, (downpour::read_position))
CAF_ADD_TYPE_ID(downpour, (downpour::push_batch))
CAF_ADD_TYPE_ID(downpour, (downpour::push_batch_reply))
CAF_ADD_TYPE_ID(downpour, (downpour::ticket_tally))
CAF_ADD_TYPE_ID(downpour, (downpour::replica_update))
CAF_ADD_TYPE_ID(downpour, (downpour::replica_set))
CAF_ADD_TYPE_ID(downpour, (std::vector<std::uint32_t>))
CAF_ADD_TYPE_ID(downpour, (downpour::fence_report))
CAF_ADD_TYPE_ID(downpour, (downpour::failover_plan))
CAF_ADD_TYPE_ID(downpour, (downpour::kept_push))
CAF_ADD_TYPE_ID(downpour, (std::vector<downpour::kept_push>))
CAF_END_TYPE_ID_BLOCK(downpour)
