// The stop supervisor's tickets: exactly last_step - start_step of them in
// async and ssp, the stop (a signal) with a checkpoint at the step reached,
// the drain until every shard applied every push, and the job's end.
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

// Every worker has said done, before or at the last step: their passes
// over the training files (--passes) end the job at the step reached.
bool passes_done(const stop_supervisor_state& st) {
  return st.finished.size() >= st.cfg.workers;
}

// Stopping, no ticket is handed out any more: once every worker has asked
// for one (or left), every push is out.
bool all_pushes_out(const stop_supervisor_state& st) {
  if (st.cfg.mode == train_mode::sync) return true;  // the shards stop by themselves
  return (stopping(st) || st.granted >= st.cfg.last_step || passes_done(st)) && st.active.empty();
}

// The step every shard must have applied before the job ends.
std::int64_t drain_target(const stop_supervisor_state& st) {
  if (stopping(st)) return st.granted;
  if (passes_done(st)) return st.cfg.mode == train_mode::sync ? st.reported_step : st.granted;
  return st.cfg.last_step;
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

void watch_ticket_holder(supervisor_pointer self, std::uint32_t worker) {
  auto& st = self->state;
  auto sender = self->current_sender();
  if (!sender || st.ticket_holders.count(worker)) return;
  st.ticket_holders[worker] = caf::actor_cast<caf::actor_addr>(sender);
  self->monitor(sender);
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
  const auto target = drain_target(st);
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
  watch_ticket_holder(self, worker);
  st.holding.erase(worker);  // asking again means its last push went out first
  if (stopping(st))
    return caf::make_error(errc::interrupted, "the job is stopping (" + st.stop_reason + ")");
  if (st.granted > st.cfg.start_step) st.last_loss = loss;  // a worker's first ask has none
  auto ticket = next_ticket(st.granted, st.cfg.last_step);
  if (ticket < 0) return -1;
  st.active.insert(worker);
  st.holding.insert(worker);
  if (st.granted > st.cfg.start_step) st.progress->on_step(st.granted, loss);
  ++st.granted;
  return ticket;
}

void on_done(supervisor_pointer self, std::uint32_t worker) {
  auto& st = self->state;
  st.active.erase(worker);
  st.holding.erase(worker);
  st.finished.insert(worker);
  // Sync drains toward last_step from the start; workers whose passes are
  // done end it sooner, at the last round they pushed for. The new epoch
  // drops the answers of the old drain.
  const bool sooner = st.cfg.mode == train_mode::sync && st.draining && passes_done(st) &&
                      !stopping(st) && st.final_step < 0 && st.reported_step < st.cfg.last_step;
  if (sooner) {
    st.draining = false;
    ++st.epoch;
  }
  maybe_drain(self);
}

// A dead worker's unused ticket goes back, so the job still reaches last_step;
// if its push did arrive, the shards refuse the one extra push at last_step.
void on_worker_down(supervisor_pointer self, const caf::down_msg& dm) {
  auto& st = self->state;
  for (auto it = st.ticket_holders.begin(); it != st.ticket_holders.end(); ++it) {
    if (it->second != dm.source) continue;
    auto worker = it->first;
    st.ticket_holders.erase(it);
    if (st.holding.erase(worker)) {
      --st.granted;
      st.cfg.log.warn("stop_supervisor: worker " + std::to_string(worker) +
                      " is gone; its ticket is returned");
    }
    st.active.erase(worker);  // a worker that said done is no longer active anyway
    return maybe_drain(self);
  }
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
