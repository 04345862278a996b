// The worker's state, shared by its two source files: worker.cpp (the phases
// and where the modes differ) and worker_params.cpp (assembling the pulled
// parameters, replaying the worker's own update). Not part of the protocol:
// only the worker includes it.
#pragma once

#include <array>
#include <chrono>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "protocol/buffers.hpp"
#include "protocol/peer_guard.hpp"
#include "actors/worker_config.hpp"
#include "reporting/meters.hpp"
#include "data/batch_record.hpp"
#include "data/batch_source.hpp"
#include "model/model.hpp"

namespace downpour {

// See the diagram in worker.hpp.
enum class worker_phase {
  admitting,  // ssp: the coordinator has not admitted the next step yet
  pulling,    // waiting for every shard's parameters
  holding,    // a gradient waits for its ticket (and a replaying prefetch)
  verdict,    // a non-finite batch was reported: skip it, or stop?
};

// A model with row variables: one batch in flight, the keys it touches
// (ascending), where each shard's keys and their values begin among them
// (shards + 1 entries each), their pulled values and their gradient, each
// key its variable's cols floats. A pipelined worker holds two, pulling the
// next batch's rows while it computes on the one in hand; each is reused
// batch after batch, so a step allocates nothing once they have grown.
struct row_batch {
  // The source's own batch, or (pipelined) the copy below: the source reuses
  // its own at its next draw, which then comes before this batch's compute.
  const batch* data = nullptr;
  batch copy;
  read_position position;  // where a streamed source stood after this batch
  // Its own, so the batch's keys gathered for its pulls are still gathered
  // when it is computed on, after the next batch's keys were.
  std::unique_ptr<model_workspace> workspace;
  std::vector<std::uint64_t> keys;
  std::vector<std::size_t> key_cuts;
  std::vector<std::size_t> value_cuts;
  floats rows;
  floats row_grad;
};

// Async/ssp: a push some shards have not answered yet.
struct unsettled_push {
  std::size_t missing = 0;   // shards yet to answer
  std::int64_t refused = 0;  // shards that refused it
};

// --ticket-lease > 1: the lease in hand's tickets not used yet, the next first.
struct leased_tickets {
  std::int64_t next = 0;
  std::int64_t left = 0;
};

struct worker_state {
  worker_config cfg;
  worker_phase phase = worker_phase::pulling;
  std::unique_ptr<model_workspace> workspace;
  std::shared_ptr<batch_source> source;  // null until a streamed worker knows where it stands
  const batch* current = nullptr;        // the batch of this step (drawn when it began)
  std::uint64_t pass = 0;                // streamed: the pass the last batch ended in
  std::uint64_t pass_examples = 0;       // and the examples of it so far
  std::unique_ptr<batch_record> record;  // only when the environment asks (tests)
  // The parameters computed on: the buffer the pull replies share when it
  // holds every shard's part at the model's own offsets (one shard with the
  // whole model; or in one process, every shard's last update written over
  // this worker's own gradient), no copy; else the parts copied into
  // `assembled`.
  std::shared_ptr<const floats> params;
  std::shared_ptr<floats> assembled;
  std::vector<shared_tensor> replies;  // this round's, per shard
  std::size_t pulls_pending = 0;       // replies still missing; 0: the parameters are in
  // Gradients and replayed parameters: one gradient buffer goes to every
  // shard (each owns its parts and writes its new parameters there), so a
  // step copies nothing; the worker writes a buffer again only once no one
  // else holds it.
  shared_buffer_pool buffers{6};
  std::shared_ptr<floats> grad;
  bool replays = false;                   // applies its own updates (see apply_own_update)
  std::optional<replay_offer> offer;      // the update applied into `replayed`, if any
  std::shared_ptr<floats> replayed;       // params with the worker's last push applied (offer)
  std::vector<std::int64_t> pulled_at;    // per shard: the step its slice was read at
  std::vector<std::int64_t> computed_at;  // pulled_at of the gradient's parameters (stamps)
  // async/ssp: the global step the next push makes (-1: the job is over);
  // empty while the ticket asked for is not in.
  std::optional<std::int64_t> ticket;
  // async/ssp, by local step: the supervisor learns how each push fared
  // (settle_atom); a worker leaves only once all are answered.
  std::map<std::int64_t, unsettled_push> unsettled;
  // With a keeper, by local step: per shard, the push until that shard
  // answered it (a lost ps answers nothing; the keeper sends it again).
  std::map<std::int64_t, std::vector<std::optional<push_msg>>> waiting;
  std::optional<caf::error> leave_reason;  // leaving once every push is answered
  // --ticket-lease > 1 (worker_lease.cpp): tickets leased and not used, the
  // answers the supervisor has not heard yet (told with the next ask), and
  // whether it recalled the lease (from then on each answer is told at once).
  leased_tickets lease;
  ticket_tally tally;
  bool recalled = false;
  std::int64_t min_step = 0;         // sync: the step the next pull must wait for
  std::size_t pushed_this_step = 0;  // sync: gradients pushed for pulled_at[0]
  std::int64_t last_round = -1;      // sync: the round of the last gradient pushed
  std::int64_t local_step = 0;
  // With a keeper: this trainer's pushes' seqs are seq_base + 1, + 2, ...
  // (random per trainer started, so no two pushes of a job share one).
  std::uint64_t seq_base = 0;
  std::uint64_t seqs_used = 0;
  float grad_loss = 0.0f;  // the loss of the gradient not pushed yet
  float last_loss = 0.0f;  // the loss of the last pushed gradient
  // A model with row variables: the batch in hand, and the one whose rows
  // the pulls out fill (the same one unless the next batch was prefetched).
  std::array<row_batch, 2> held;
  std::size_t hand = 0;
  bool prefetched = false;  // the next batch, in the other slot, is drawn and its pulls are out
  bool passes_done = false;  // the source had no batch left at the last draw
  bool unpushed_draw = false;  // the batch in hand is drawn, its gradient not pushed yet
  peer_guard guard;        // exits and errors only from this node; nothing else served
  bool leaving = false;    // told to stop: leave after the next push
  // Where this node's /metrics reads the worker's steps (none in a test's
  // actor system); the time of the last push and the compute since.
  worker_meter* meter = nullptr;
  std::chrono::steady_clock::time_point last_push;
  double busy_s = 0.0;  // compute and input since the last push
  static inline const char* name = "worker";
};

using worker_pointer = worker_actor::stateful_pointer<worker_state>;

// worker.cpp

// Done, told to stop, or the job ended early: the supervisor and the
// coordinator count this worker out.
void leave_job(worker_pointer self, caf::error reason);
void finish_job(worker_pointer self);
// A request to a shard or the supervisor failed (a down peer's own message says why).
void request_failed(worker_pointer self, const char* what, const caf::error& err);
// The first step of the worker (or of a streamed worker that knows where it stands).
void begin_training(worker_pointer self);
// Shard k's answer to a pull: once every shard's is in, the step computes.
void on_pull_reply(worker_pointer self, std::size_t k, pull_reply& r);
// Asks the supervisor for the global step of the next push (async, ssp);
// leased, takes it from the lease in hand when one is left.
void request_ticket(worker_pointer self);
// worker_push.cpp: a lost peer ends the worker; what its node's next trainer
// picks up is left first: the pushes no shard answered with the keeper, and
// a batch drawn but not pushed back in the seat's batches (none without them).
void leave_to_next_trainer(worker_pointer self);
// The ticket asked for is in (-1: the job is over): the step goes on.
void ticket_in(worker_pointer self, std::int64_t ticket);
// pulling -> holding once every pull is in (computing on them).
void enter_pulling(worker_pointer self);

// worker_push.cpp

// The gradient to every shard; async and ssp count it settled once every
// shard answered (the supervisor spends or returns its ticket).
void push_gradient(worker_pointer self);
// Async with a sparse variable: the push and the next batch's pull of rows
// in one message per shard, then the ticket asked for.
void push_with_next_pull(worker_pointer self);

// worker_lease.cpp: tickets by the block (--ticket-lease > 1)

inline bool leases(const worker_config& cfg) {
  return cfg.ticket_lease > 1;
}

// The next ticket from the lease in hand, with no message; else one request
// for a new lease that carries the answers not told yet.
void lease_ticket(worker_pointer self);

// Every shard answered a push (`refused` of them refused it): told with the
// next ask, or at once once the lease was recalled.
void tally_push(worker_pointer self, std::int64_t refused);

// The answers not told yet and the lease's unused tickets, to the
// supervisor: before the worker leaves, and when it recalls the lease.
void give_back(worker_pointer self);

// The supervisor's recall: the unused tickets go back.
void on_recall(worker_pointer self);

// worker_input.cpp

// The batch of the step that begins (the prefetched one, if any), before its
// ticket is asked for: a worker whose passes are done leaves holding no
// ticket. False when there is none (the worker has left: done, or bad data
// stopped the job).
bool draw(worker_pointer self);

// A model with row variables: the next batch into the other slot, to be
// pulled while the one in hand is computed on. False if bad data stopped
// the job (the worker has left); passes_done if there was none.
bool draw_next(worker_pointer self);

// worker_pulls.cpp

// The pulls of the batch in hand (its rows, if any), answered at min_step.
void pull_step(worker_pointer self, std::int64_t min_step);

// Async/ssp: a plain pull, or one that offers the update just applied.
void request_async_pulls(worker_pointer self);

// Pipelined, before the compute: the next step's pulls go out (with a row
// variable, of the next batch, drawn now; in ssp once the coordinator admits
// that step). False if the worker has left (bad data).
bool prefetch(worker_pointer self);

// Asks every shard where this worker's reading stood, then opens its
// stream there and begins training.
void start_stream(worker_pointer self);

// worker_params.cpp

// Only worth it between nodes: locally a pull reply shares a buffer, no copy.
// Not with bf16 on the wire: the shard applies the rounded gradient.
bool replays_own_updates(const worker_config& cfg, const caf::node_id& here);

// A reply either carries the shard's part or confirms that the worker's own
// update, applied into `replayed`, is all that changed there since its pull.
caf::error take_reply(worker_state& st, std::size_t k, pull_reply& r);

// Every reply is in: the parameters to compute on.
void settle_params(worker_state& st);

// Applies the gradient to the parameters last pulled, as the shards will.
void apply_own_update(worker_state& st);

// Every shard gets the whole gradient buffer and owns its own ranges of it.
shared_tensor outgoing_part(const worker_state& st, std::size_t k);

// The batch of this gradient: the next is drawn after the push.
void record_batch(worker_state& st);

// worker_meter.cpp: what this node's /metrics reads of the worker

// The worker's meter of the node (none in a test's actor system).
void attach_meter(worker_state& st, caf::actor_system& sys);

// A push ends a step: its time from the push before, of which what was not
// compute or input was waiting (pulls, the ticket, a barrier).
void meter_step(worker_state& st);

// A batch taken and its loss and gradient computed: busy_s seconds in all,
// input_s of them taking the batch.
// Where the modes differ (worker_modes.cpp).
bool prefetches(const worker_state& st);
bool prefetches_rows(const worker_state& st);
bool exchanges(const worker_state& st);
std::int64_t sync_step(const worker_state& st);
bool job_over(const worker_state& st);
bool may_push(const worker_state& st);
void advance_sync_barrier(worker_state& st);
std::int64_t pushed_step(const worker_state& st);

// Time taking the next batch, and computing on it (busy_s counts both).
void meter_input(worker_state& st, double seconds);
void meter_compute(worker_state& st, double seconds);

// worker_rows.cpp: the rows of a sparse variable

inline bool has_rows(const worker_config& cfg) {
  return !cfg.row_bounds.empty();
}

inline row_batch& in_hand(worker_state& st) {
  return st.held[st.hand];
}

inline const row_batch& in_hand(const worker_state& st) {
  return st.held[st.hand];
}

// The batch the pulls out are for: the next one once it was prefetched.
inline row_batch& being_pulled(worker_state& st) {
  return st.held[st.prefetched ? 1 - st.hand : st.hand];
}

inline const row_batch& being_pulled(const worker_state& st) {
  return st.held[st.prefetched ? 1 - st.hand : st.hand];
}

// Keeps a drawn batch, and where the source stood after it, in slot: a
// copy only when the worker prefetches rows (prefetches_rows).
void keep_batch(const worker_state& st, row_batch& slot, const batch& b,
                const read_position& after);

// Cuts the rows the batch being pulled touches by shard: the keys to pull.
void cut_rows(worker_state& st);

// Shard k's pull of its rows of the batch being pulled, answered at min_step.
row_pull row_pull_for(const worker_state& st, std::size_t k, std::int64_t min_step);

// Shard k's rows of a reply, into the batch being pulled.
caf::error take_rows(worker_state& st, std::size_t k, pull_reply& r);

// Shard k's rows of the gradient of the batch in hand, for its push.
void add_outgoing_rows(const worker_state& st, std::size_t k, push_msg& m);

}  // namespace downpour
