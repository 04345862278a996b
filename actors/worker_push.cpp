// A worker's push: the gradient to every shard, and in async and ssp the
// supervisor told how each push fared once every shard answered it. Async
// with a sparse variable sends each shard the push and the pull of the next
// batch's rows in one message: the pull would follow the push at once
// anyway, and the shard answers it after the push exactly as before, with
// half the messages (each one costs both nodes system calls and wake-ups).
#include <algorithm>
#include <utility>

#include "actors/worker_state.hpp"

namespace downpour {
namespace {

// Fenced: this worker is of the epoch before a failover (a ps it still
// reaches was failed over while hung, or fenced it out), so it trains on
// nothing live. Its unanswered pushes go to its keeper and it leaves as
// for a lost peer (errc::recovering): its node joins again. True if so.
bool left_fenced_epoch(worker_pointer self, const caf::error& err) {
  if (err != errc::fenced) return false;
  leave_to_next_trainer(self);
  self->state.unsettled.clear();
  request_failed(self, "a shard fenced it out",
                 caf::make_error(errc::recovering, "a push of the epoch before a failover"));
  return true;
}

// A refused push is not fatal (the shard applied nothing); the worker goes
// on with fresh parameters and says why.
void warn_refused(worker_pointer self, std::size_t shard, const caf::error& err) {
  if (err == caf::sec::request_receiver_down) return;  // the shard's down message follows
  self->state.cfg.log.warn("ps " + std::to_string(shard) +
                           " refused a push: " + self->system().render(err));
}

// Every shard answered the push of local step `id`: the supervisor counts its
// ticket spent or (refused somewhere) returned; leased, it hears with the
// next ask (worker_lease.cpp). A worker told the job is over
// asks once more when its last push is answered: it may get a returned ticket.
void settle_push(worker_pointer self, std::int64_t id, std::int64_t refused) {
  auto& st = self->state;
  auto it = st.unsettled.find(id);
  if (it == st.unsettled.end()) return;
  it->second.refused += refused;
  if (--it->second.missing > 0) return;
  if (leases(st.cfg))
    tally_push(self, it->second.refused);
  else
    self->send(st.cfg.supervisor, settle_atom_v, st.cfg.index, it->second.refused);
  st.unsettled.erase(it);
  if (!st.unsettled.empty()) return;
  if (st.leave_reason) return leave_job(self, *std::exchange(st.leave_reason, std::nullopt));
  if (st.ticket && *st.ticket < 0) request_ticket(self);
}

// The gradient's message to each shard, its push counted unsettled (async,
// ssp) and, with a keeper, numbered (one seq to every shard) and kept until
// each shard answers it.
std::vector<push_msg> outgoing_pushes(worker_state& st) {
  if (st.replays) apply_own_update(st);
  if (st.record) record_batch(st);
  st.unpushed_draw = false;
  if (st.cfg.mode != train_mode::sync)
    st.unsettled[st.local_step] = unsettled_push{st.cfg.shards.size(), 0};
  const std::uint64_t seq = st.cfg.keeper ? st.seq_base + ++st.seqs_used : 0;
  auto* waiting = seq != 0 ? &st.waiting[st.local_step] : nullptr;
  std::vector<push_msg> out;
  out.reserve(st.cfg.shards.size());
  for (std::size_t k = 0; k < st.cfg.shards.size(); ++k) {
    push_msg m{st.computed_at[k], st.cfg.index, outgoing_part(st, k)};
    if (has_rows(st.cfg)) add_outgoing_rows(st, k, m);
    // With a row variable, the next batch may be drawn already (prefetched).
    if (st.cfg.stream)
      m.position.push_back(has_rows(st.cfg) ? in_hand(st).position : st.source->position());
    m.seq = seq;
    if (waiting) waiting->push_back(m);
    out.push_back(std::move(m));
  }
  return out;
}

// A push a shard answered needs no keeping, unless the answer says a
// failover is under way (fenced) or its ps was lost: then its keeper has it.
void answered(worker_pointer self, std::int64_t id, std::size_t k, const caf::error& err) {
  auto& st = self->state;
  auto it = st.waiting.find(id);
  if (it == st.waiting.end() || k >= it->second.size()) return;
  auto& kept = it->second[k];
  if (kept && (err == errc::fenced || err == caf::sec::request_receiver_down))
    self->send(st.cfg.keeper, keep_atom_v, kept_push{static_cast<std::uint32_t>(k), std::move(*kept)});
  kept.reset();
  if (std::none_of(it->second.begin(), it->second.end(), [](const auto& p) { return p.has_value(); }))
    st.waiting.erase(it);
}

void send_pushes(worker_pointer self, std::int64_t id, std::vector<push_msg> pushes) {
  auto& st = self->state;
  for (std::size_t k = 0; k < pushes.size(); ++k)
    self->request(st.cfg.shards[k], caf::infinite, push_atom_v, std::move(pushes[k]))
        .then(
            [=](std::int64_t) {
              answered(self, id, k, caf::none);
              settle_push(self, id, 0);
            },
            [=](caf::error& err) {
              answered(self, id, k, err);
              warn_refused(self, k, err);
              if (left_fenced_epoch(self, err)) return;
              settle_push(self, id, 1);
            });
}

// The step is done: its loss, the meter, sync's barrier, the log line.
void count_push(worker_pointer self) {
  auto& st = self->state;
  st.last_loss = st.grad_loss;
  ++st.local_step;
  meter_step(st);
  if (st.cfg.mode == train_mode::sync) {
    st.last_round = sync_step(st);
    self->send(st.cfg.supervisor, report_atom_v, st.cfg.index, sync_step(st) + 1, st.last_loss);
    advance_sync_barrier(st);
  }
  if (st.local_step % st.cfg.log_every == 0 && st.cfg.log.enabled(log_level::info))
    st.cfg.log.info(step_log_line(pushed_step(st), st.local_step, st.last_loss));
}

void on_push_pull_reply(worker_pointer self, std::size_t k, std::int64_t id, push_pull_reply& r) {
  answered(self, id, k, r.refusal);
  if (r.refusal) warn_refused(self, k, r.refusal);
  if (left_fenced_epoch(self, r.refusal)) return;
  settle_push(self, id, r.refusal ? 1 : 0);
  on_pull_reply(self, k, r.pull);
}

void send_push_pulls(worker_pointer self, std::int64_t id, std::vector<push_msg> pushes) {
  auto& st = self->state;
  st.pulls_pending = st.cfg.shards.size();
  for (std::size_t k = 0; k < pushes.size(); ++k) {
    push_pull x{std::move(pushes[k]), row_pull_for(st, k, 0)};
    self->request(st.cfg.shards[k], caf::infinite, push_atom_v, std::move(x))
        .then([=](push_pull_reply& r) { on_push_pull_reply(self, k, id, r); },
              [=](caf::error& err) {
                answered(self, id, k, err);
                warn_refused(self, k, err);
                if (left_fenced_epoch(self, err)) return;
                settle_push(self, id, 1);
                request_failed(self, "pull failed", err);
              });
  }
}

}  // namespace

void leave_to_next_trainer(worker_pointer self) {
  auto& st = self->state;
  if (st.cfg.batches && st.unpushed_draw) st.cfg.batches->draw_again();
  if (!st.cfg.keeper) return;
  std::size_t n = 0;
  for (auto& [id, parts] : st.waiting)
    for (std::size_t k = 0; k < parts.size(); ++k)
      if (auto& kept = parts[k]) {
        self->send(st.cfg.keeper, keep_atom_v,
                   kept_push{static_cast<std::uint32_t>(k), std::move(*kept)});
        kept.reset();
        ++n;
      }
  if (n > 0)
    st.cfg.log.info("worker " + std::to_string(st.cfg.index) + " keeps " + std::to_string(n) +
                    " push(es) no shard answered, to send again after the failover");
}

void push_gradient(worker_pointer self) {
  const auto id = self->state.local_step;
  send_pushes(self, id, outgoing_pushes(self->state));
  count_push(self);
}

// The next batch is drawn before the push is sent, its position read first;
// with no next batch the push goes alone and the worker leaves once it is
// answered (draw).
void push_with_next_pull(worker_pointer self) {
  auto& st = self->state;
  const auto id = st.local_step;
  auto pushes = outgoing_pushes(st);
  count_push(self);
  if (!draw(self)) return send_pushes(self, id, std::move(pushes));
  cut_rows(st);
  send_push_pulls(self, id, std::move(pushes));
  request_ticket(self);
  enter_pulling(self);
}

}  // namespace downpour
