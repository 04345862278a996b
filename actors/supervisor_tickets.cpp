// The stop supervisor's tickets: exactly last_step - start_step of them in
// async and ssp, the stop (a signal) with a checkpoint at the step reached,
// the drain until every shard applied every push, and the job's end.
#include <algorithm>
#include <cstdio>

#include "actors/stop_supervisor.hpp"
#include "actors/supervisor_state.hpp"

namespace downpour {

std::int64_t next_ticket(std::int64_t granted, std::int64_t last_step) {
  return granted < last_step ? granted : -1;
}

namespace {

void finish(supervisor_pointer self, std::int64_t step) {
  auto& st = self->state;
  if (st.final_step >= 0 || st.failure) return;
  st.final_step = step;
  st.progress->finish(step);
  for (auto& rp : st.end_waiters) rp.deliver(step, st.last_loss, st.stop_reason);
  st.end_waiters.clear();
}

// The job ends without a last step: every end request gets the reason.
void fail_job(supervisor_pointer self, caf::error err) {
  auto& st = self->state;
  if (st.final_step >= 0 || st.failure) return;
  st.failure = std::move(err);
  for (auto& rp : st.end_waiters) rp.deliver(st.failure);
  st.end_waiters.clear();
}

bool stopping(const stop_supervisor_state& st) {
  return !st.stop_reason.empty();
}

bool all_settled(const stop_supervisor_state& st) {
  for (auto& h : st.holders)
    if (h.second.unsettled > 0) return false;
  return true;
}

// Stopping, no ticket is handed out any more: once every worker has asked
// for one (or left), every push is out.
bool all_pushes_out(const stop_supervisor_state& st) {
  if (st.cfg.mode == train_mode::sync) return true;  // the shards stop by themselves
  return (stopping(st) || st.granted >= st.cfg.last_step) && st.active.empty() && all_settled(st);
}

// Stopped: the checkpoint of the stop step is written before the end is told.
void save_and_finish(supervisor_pointer self, std::int64_t step) {
  self->request(self->state.cfg.saver, std::chrono::minutes(10), save_atom_v, step)
      .then([=](std::string&) { finish(self, step); },
            [=](caf::error& err) { fail_job(self, std::move(err)); });
}

void drained(supervisor_pointer self, std::int64_t step) {
  if (stopping(self->state)) return save_and_finish(self, step);
  finish(self, step);
}

// Every worker actor is watched, a rejoined one apart from the one it
// replaces: the down of the old one returns only the old one's tickets.
ticket_holder* holder_of_sender(supervisor_pointer self, std::uint32_t worker) {
  auto& st = self->state;
  auto sender = self->current_sender();
  if (!sender) return nullptr;
  auto addr = caf::actor_cast<caf::actor_addr>(sender);
  auto it = st.holders.find(addr);
  if (it != st.holders.end()) return &it->second;
  self->monitor(sender);
  return &(st.holders[addr] = ticket_holder{worker, 0});
}

// A ticket whose push was refused or lost: the next ask gets it again. Its
// push may have reached some shards; they are at the last step one push
// early and take no more (parameter_shard), so every shard ends exactly.
void return_tickets(stop_supervisor_state& st, std::int64_t n) {
  st.granted = std::max(st.cfg.start_step, st.granted - n);
}

std::string bad_batch_line(const stop_supervisor_state& st, std::uint32_t worker,
                           std::int64_t step, float loss) {
  const auto lr = learning_rate_at(st.cfg.progress.schedule, step);
  char numbers[128];
  std::snprintf(numbers, sizeof numbers, "(loss %g) at global step %lld with learning rate %g",
                loss, static_cast<long long>(step), lr);
  return "worker " + std::to_string(worker) + " got a non-finite loss or gradient " + numbers;
}

// Sync rounds complete at the shards, not by tickets: the stop checkpoint is
// taken a few rounds ahead of shard 0, where every shard still is before it
// (rounds take a gradient from every worker; these messages take far less).
constexpr std::int64_t sync_stop_margin = 2;

void stop_sync(supervisor_pointer self) {
  self->request(self->state.cfg.shards[0], std::chrono::minutes(1), await_atom_v, std::int64_t{0})
      .then(
          [=](std::int64_t now) {
            save_and_finish(self, std::min(now + sync_stop_margin, self->state.cfg.last_step));
          },
          [=](caf::error& err) { fail_job(self, std::move(err)); });
}

}  // namespace

// Pushes and done travel on different paths: every shard is asked to
// confirm it applied the target step before the end is told.
void maybe_drain(supervisor_pointer self) {
  auto& st = self->state;
  if (st.recovering || st.draining || st.end_waiters.empty() || !all_pushes_out(st)) return;
  if (stopping(st) && st.cfg.mode == train_mode::sync) return;  // see on_stop
  st.draining = true;
  const auto target = stopping(st) ? st.granted : st.cfg.last_step;
  auto remaining = std::make_shared<std::size_t>(st.cfg.shards.size());
  if (*remaining == 0) return finish(self, target);
  const auto epoch = st.epoch;
  for (auto& shard : st.cfg.shards)
    self->request(shard, caf::infinite, await_atom_v, target)
        .then(
            [=](std::int64_t) {
              if (self->state.epoch != epoch) return;
              if (--*remaining == 0) drained(self, target);
            },
            [=](caf::error& err) {
              if (self->state.epoch != epoch) return;  // a restore failed the old await
              self->state.cfg.log.error("stop_supervisor: a shard failed while draining: " +
                                        self->system().render(err));
              finish(self, -1);
            });
}

caf::result<std::int64_t> on_ticket(supervisor_pointer self, std::uint32_t worker, float loss) {
  auto& st = self->state;
  if (st.recovering)
    return caf::make_error(errc::recovering, "a ps is down; the cluster is recovering");
  if (st.failure) return st.failure;
  auto holder = holder_of_sender(self, worker);
  if (stopping(st))
    return caf::make_error(errc::interrupted, "the job is stopping (" + st.stop_reason + ")");
  if (st.granted > st.cfg.start_step) st.last_loss = loss;  // a worker's first ask has none
  auto ticket = next_ticket(st.granted, st.cfg.last_step);
  if (ticket < 0) return -1;
  st.active.insert(worker);
  if (holder) ++holder->unsettled;
  if (st.granted > st.cfg.start_step) st.progress->on_step(st.granted, loss);
  ++st.granted;
  return ticket;
}

void on_done(supervisor_pointer self, std::uint32_t worker) {
  self->state.active.erase(worker);
  maybe_drain(self);
}

// Every shard answered one push of the sender's: its ticket is spent, or
// (refused by a shard) it goes back.
void on_settle(supervisor_pointer self, std::int64_t refused) {
  auto& st = self->state;
  auto it = st.holders.find(caf::actor_cast<caf::actor_addr>(self->current_sender()));
  if (it == st.holders.end() || it->second.unsettled == 0) return;  // a push of before a restore
  --it->second.unsettled;
  if (refused > 0) return_tickets(st, 1);
  maybe_drain(self);
}

// A dead worker's tickets whose pushes were not answered by every shard go
// back (lost in a partition, a push may have reached one shard and not the
// other), so the job still reaches last_step.
void on_worker_down(supervisor_pointer self, const caf::down_msg& dm) {
  auto& st = self->state;
  auto it = st.holders.find(dm.source);
  if (it == st.holders.end()) return;
  auto holder = it->second;
  st.holders.erase(it);
  if (holder.unsettled > 0) {
    return_tickets(st, holder.unsettled);
    st.cfg.log.warn("stop_supervisor: worker " + std::to_string(holder.worker) + " is gone; " +
                    std::to_string(holder.unsettled) + " of its tickets returned");
  }
  bool replaced = false;  // a rejoined worker of that index is still active
  for (auto& h : st.holders) replaced = replaced || h.second.worker == holder.worker;
  if (!replaced) st.active.erase(holder.worker);
  maybe_drain(self);
}

void on_stop(supervisor_pointer self, const std::string& why) {
  auto& st = self->state;
  // Async and ssp drain only once every ticket is out: the job is ending then.
  const bool ending = st.draining && st.cfg.mode != train_mode::sync;
  if (stopping(st) || ending || st.final_step >= 0 || st.failure) return;
  st.stop_reason = why;
  st.cfg.log.info("stop_supervisor: stopping (" + why +
                  "): no more steps; a checkpoint follows at the step reached");
  if (st.cfg.mode != train_mode::sync) return maybe_drain(self);
  stop_sync(self);
}

// A batch with a non-finite loss or gradient: skipped while within
// --max-bad-batches, else the job fails with one line saying what to try.
caf::result<std::int64_t> on_bad_batch(supervisor_pointer self, std::uint32_t worker,
                                       std::int64_t step, float loss) {
  auto& st = self->state;
  if (st.failure) return st.failure;
  const auto where = bad_batch_line(st, worker, step, loss);
  if (++st.bad_batches <= st.cfg.max_bad_batches) {
    st.cfg.log.warn(where + "; batch skipped (" + std::to_string(st.bad_batches) + " of at most " +
                    std::to_string(st.cfg.max_bad_batches) + ")");
    return st.bad_batches;
  }
  st.cfg.log.error("the job diverged: " + where +
                   "; no checkpoint is written from here, the ones saved before are kept; try a "
                   "smaller --learning-rate (e.g. 10 times smaller)" +
                   (st.cfg.max_bad_batches == 0 ? " or --max-bad-batches N to skip a few bad batches"
                                                : ""));
  fail_job(self, caf::make_error(errc::diverged, "the job diverged at global step " +
                                                     std::to_string(step)));
  return st.failure;
}

caf::result<std::int64_t, float, std::string> on_end(supervisor_pointer self) {
  auto& st = self->state;
  if (st.failure) return st.failure;
  if (st.final_step >= 0) return {st.final_step, st.last_loss, st.stop_reason};
  if (st.recovering) return caf::make_error(errc::recovering, "a ps is down");
  st.end_waiters.push_back(self->make_response_promise<std::int64_t, float, std::string>());
  maybe_drain(self);
  return st.end_waiters.back();
}

}  // namespace downpour
