// The stop supervisor's tickets: exactly last_step - start_step of them in
// async and ssp, each spent only once every shard answered its push (a
// refused or lost push gives it back), the stop (a signal), the drain until
// every shard applied every push, the checkpoint of the final step, and the
// job's end. Its phases: actors/chief_phase.hpp.
#include <algorithm>
#include <cstdio>

#include "actors/stop_supervisor.hpp"
#include "actors/supervisor_state.hpp"

namespace downpour {

std::int64_t next_ticket(std::int64_t granted, std::int64_t last_step) {
  return granted < last_step ? granted : -1;
}

namespace {

using phase = chief_phase;

// The end is told: the chief collects the model and stops the nodes.
void tell_end(supervisor_pointer self, std::int64_t step) {
  auto& st = self->state;
  if (st.cfg.log.enabled(log_level::debug))
    st.cfg.log.debug("stop_supervisor: " + std::to_string(st.ticket_requests) +
                     " ticket requests and " + std::to_string(st.settles) + " settles for " +
                     std::to_string(step - st.cfg.start_step) + " steps");
  // Sync rounds count as their reports come; the shards confirmed the
  // rounds whose reports are still on their way.
  if (st.cfg.mode == train_mode::sync && step > st.reported_step) {
    st.cfg.tally->record_applied(step - st.reported_step);
    st.reported_step = step;
  }
  end_pause(st);
  st.life.enter(phase::stopping_nodes);
  st.final_step = step;
  for (auto& rp : st.end_waiters) rp.deliver(step, st.last_loss, st.stop_reason);
  st.end_waiters.clear();
}

// The job ends without a last step: every end request gets the reason.
void fail_job(supervisor_pointer self, caf::error err) {
  auto& st = self->state;
  if (walk_over(st)) return;
  st.life.enter(phase::failed);
  st.failure = std::move(err);
  refuse_ticket_waiters(st, st.failure);
  for (auto& rp : st.end_waiters) rp.deliver(st.failure);
  st.end_waiters.clear();
}

// Every worker has said done, before or at the last step: their passes
// over the training files (--passes) end the job at the step reached.
bool passes_done(const stop_supervisor_state& st) {
  return st.finished.size() >= st.cfg.workers;
}

// Once every worker has asked for a ticket after the last one (or left, or
// finished its passes), and every shard answered every push, every push is out.
bool all_pushes_out(const stop_supervisor_state& st) {
  if (st.cfg.mode == train_mode::sync) return true;  // the shards stop by themselves
  const bool no_more = st.life.is(phase::stopping) || st.granted >= st.cfg.last_step ||
                       passes_done(st);
  return no_more && st.active.empty() && all_settled(st);
}

// The step every shard must have applied before the job ends: the stop's,
// the last round pushed for (sync) or the last ticket's when the passes
// ended first, else the last step.
std::int64_t drain_target(const stop_supervisor_state& st) {
  if (st.life.is(phase::stopping)) return st.granted;
  if (passes_done(st)) return st.cfg.mode == train_mode::sync ? st.reported_step : st.granted;
  return st.cfg.last_step;
}

void stop_sync(supervisor_pointer self);

// The final step's checkpoint is written before the end is told. A ps lost
// meanwhile makes the answer stale: the restored job ends (and saves) again.
// A sync stop whose step the shards passed before the saver asked them (a
// loaded machine) is taken again further on.
// A stop's progress line follows its checkpoint; the last step's precedes it.
void save_last_checkpoint(supervisor_pointer self, std::int64_t step) {
  auto& st = self->state;
  st.life.enter(phase::saving_last_checkpoint);
  const auto epoch = st.epoch;
  self->request(st.cfg.saver, std::chrono::minutes(10), save_atom_v, step)
      .then(
          [=](std::string&) {
            if (self->state.epoch != epoch) return;
            if (told_to_stop(self->state)) self->state.progress->finish(step);
            tell_end(self, step);
          },
          [=](caf::error& err) {
            auto& st = self->state;
            if (st.epoch != epoch) return;
            if (err != errc::step_passed || st.cfg.mode != train_mode::sync || !told_to_stop(st))
              return fail_job(self, std::move(err));
            st.life.enter(phase::stopping);
            stop_sync(self);
          });
}

// Every shard applied every push up to step. A job that began at its last
// step trained nothing: its start checkpoint is the last one.
void drained(supervisor_pointer self, std::int64_t step) {
  auto& st = self->state;
  if (!st.life.is(phase::draining) && !st.life.is(phase::stopping)) return;  // sync: see stop_sync
  if (told_to_stop(st)) return save_last_checkpoint(self, step);
  st.progress->finish(step);
  if (st.cfg.start_step >= st.cfg.last_step) return tell_end(self, step);
  save_last_checkpoint(self, step);
}

// Pushes and done travel on different paths: every shard is asked to
// confirm it applied the target step before the end is told.
void await_shards(supervisor_pointer self, std::int64_t target) {
  auto& st = self->state;
  auto remaining = std::make_shared<std::size_t>(st.cfg.shards.size());
  if (*remaining == 0) return drained(self, target);
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
              fail_job(self, std::move(err));
            });
}

// The ticket of a batch never pushed (a bad batch while stopping): async and
// ssp workers hold it unsettled; sync workers hold none.
void return_held_ticket(supervisor_pointer self) {
  auto& st = self->state;
  auto it = st.holders.find(caf::actor_cast<caf::actor_addr>(self->current_sender()));
  if (it == st.holders.end() || it->second.unsettled == 0) return;
  --it->second.unsettled;
  if (it->second.leased > 0) --it->second.leased;  // leased: the ticket in hand was its lease's
  return_tickets(st, 1);
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
// Should the shards reach the last step first, that ends the job instead.
constexpr std::int64_t sync_stop_margin = 2;

void stop_sync(supervisor_pointer self) {
  const auto epoch = self->state.epoch;
  self->request(self->state.cfg.shards[0], std::chrono::minutes(1), await_atom_v, std::int64_t{0})
      .then(
          [=](std::int64_t now) {
            auto& st = self->state;
            if (st.epoch != epoch || !st.life.is(phase::stopping)) return;
            save_last_checkpoint(self, std::min(now + sync_stop_margin, st.cfg.last_step));
          },
          [=](caf::error& err) {
            if (self->state.epoch == epoch) fail_job(self, std::move(err));
          });
}

}  // namespace

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

// In training, or stopping in async and ssp, with the end asked for.
void maybe_drain(supervisor_pointer self) {
  auto& st = self->state;
  const bool stopping = st.life.is(phase::stopping);
  if (!st.life.is(phase::training) && !stopping) return;
  if (st.end_waiters.empty() || !all_pushes_out(st)) return;
  if (stopping && st.cfg.mode == train_mode::sync) return;  // stop_sync has it
  const auto target = drain_target(st);  // while the phase still says whether it stops
  st.life.enter(phase::draining);
  await_shards(self, target);
}

void go_on(supervisor_pointer self) {
  if (self->state.life.is(phase::stopping) && self->state.cfg.mode == train_mode::sync)
    return stop_sync(self);
  maybe_drain(self);
}

caf::result<std::int64_t> on_ticket(supervisor_pointer self, std::uint32_t worker, float loss) {
  auto& st = self->state;
  ++st.ticket_requests;
  if (st.life.is(phase::recovering))
    return caf::make_error(errc::recovering, "a ps is down; the cluster is recovering");
  if (st.life.is(phase::failed)) return st.failure;
  auto holder = holder_of_sender(self, worker);
  if (told_to_stop(st))
    return caf::make_error(errc::interrupted, "the job is stopping (" + st.stop_reason + ")");
  if (st.granted > st.cfg.start_step) st.last_loss = loss;  // a worker's first ask has none
  if (next_ticket(st.granted, st.cfg.last_step) < 0) return after_last_ticket(self, worker);
  return grant_ticket(st, holder, worker, loss);
}

void on_done(supervisor_pointer self, std::uint32_t worker) {
  auto& st = self->state;
  st.active.erase(worker);
  const bool were_done = passes_done(st);
  st.finished.insert(worker);
  // Sync drains toward last_step from the first end request; workers whose
  // passes are done end it sooner, at the last round they pushed for. The
  // new epoch drops the answers of the old drain.
  const bool sooner = st.cfg.mode == train_mode::sync && st.life.is(phase::draining) &&
                      !were_done && passes_done(st) && st.reported_step < st.cfg.last_step;
  if (!sooner) return maybe_drain(self);
  ++st.epoch;
  await_shards(self, drain_target(st));
}

// Every shard answered one push of the sender's: its ticket is spent, or
// (refused by a shard) it goes back.
void on_settle(supervisor_pointer self, std::int64_t refused) {
  auto& st = self->state;
  ++st.settles;
  auto it = st.holders.find(caf::actor_cast<caf::actor_addr>(self->current_sender()));
  if (it == st.holders.end() || it->second.unsettled == 0) return;  // a push of before a restore
  --it->second.unsettled;
  if (refused > 0)
    return_tickets(st, 1);
  else
    st.cfg.tally->record_applied(1);
  serve_ticket_waiters(self);
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
  serve_ticket_waiters(self);
  maybe_drain(self);
}

// Async and ssp drain only once every ticket is out: the job is ending
// then. Sync drains from the start; a stop cuts it short. While recovering,
// the restore goes on stopping.
void on_stop(supervisor_pointer self, const std::string& why) {
  auto& st = self->state;
  const bool sync_drain = st.life.is(phase::draining) && st.cfg.mode == train_mode::sync;
  const bool recovering = st.life.is(phase::recovering);
  if (told_to_stop(st) || !(st.life.is(phase::training) || recovering || sync_drain)) return;
  st.stop_reason = why;
  st.cfg.log.info("stop_supervisor: stopping (" + why +
                  "): no more steps; a checkpoint follows at the step reached");
  refuse_ticket_waiters(st, caf::make_error(errc::interrupted, "the job is stopping (" + why + ")"));
  if (recovering) return;
  st.life.enter(phase::stopping);
  recall_leases(self);  // their workers hear the stop at their next request, not L steps on
  go_on(self);
}

// A batch with a non-finite loss or gradient: skipped while within
// --max-bad-batches, else the job fails with one line saying what to try.
caf::result<std::int64_t> on_bad_batch(supervisor_pointer self, std::uint32_t worker,
                                       std::int64_t step, float loss) {
  auto& st = self->state;
  if (st.life.is(phase::failed)) return st.failure;
  if (st.life.is(phase::stopping_nodes)) return caf::make_error(errc::stopped, "the job is over");
  if (told_to_stop(st)) {
    // The skipped batch is never pushed: its ticket goes back, so the stop
    // step is one every shard reaches, and the worker leaves (done).
    return_held_ticket(self);
    return caf::make_error(errc::interrupted, "the job is stopping (" + st.stop_reason + ")");
  }
  st.last_loss = loss;  // status and /metrics show the non-finite loss, not an older one
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
  if (st.life.is(phase::failed)) return st.failure;
  if (st.life.is(phase::stopping_nodes)) return {st.final_step, st.last_loss, st.stop_reason};
  if (st.life.is(phase::recovering)) return caf::make_error(errc::recovering, "a ps is down");
  st.end_waiters.push_back(self->make_response_promise<std::int64_t, float, std::string>());
  maybe_drain(self);
  return st.end_waiters.back();
}

}  // namespace downpour
