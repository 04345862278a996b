#include "actors/stop_supervisor.hpp"

#include <cstdio>
#include <map>
#include <memory>
#include <set>

#include "actors/failure.hpp"
#include "actors/peer_guard.hpp"
#include "actors/status_json.hpp"
#include "config/cluster_fingerprint.hpp"

namespace downpour {

std::int64_t next_ticket(std::int64_t granted, std::int64_t last_step) {
  return granted < last_step ? granted : -1;
}

namespace {

struct stop_supervisor_state {
  supervisor_config cfg;
  std::int64_t granted = 0;  // tickets handed out, counted from step 0
  std::set<std::uint32_t> active;
  std::map<std::uint32_t, caf::actor_addr> ticket_holders;  // worker -> actor, monitored
  std::set<std::uint32_t> holding;  // granted a ticket whose push may not be out yet
  bool draining = false;
  std::int64_t final_step = -1;
  std::int64_t reported_step = 0;
  float last_loss = 0.0f;
  std::optional<validation_facts> validation;  // the newest, for status
  std::vector<caf::typed_response_promise<std::int64_t, float, std::string>> end_waiters;
  std::string stop_reason;  // why the job stops early; empty: it runs to last_step
  caf::error failure;       // the job failed (diverged): every end and ticket request gets it
  std::int64_t bad_batches = 0;
  std::unique_ptr<progress_reporter> progress;
  // A ps went down: no tickets, joining nodes wait, until the chief restores
  // every shard. The epoch tells answers of the old shards from new ones.
  bool recovering = false;
  std::int64_t epoch = 0;
  std::vector<caf::typed_response_promise<std::int64_t, coordinator_actor>> held_hellos;
  peer_guard guard;  // workers that said hello; the rest only from this node
  static inline const char* name = "stop_supervisor";
};

using supervisor_pointer = supervisor_actor::stateful_pointer<stop_supervisor_state>;

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

// Stopping, no ticket is handed out any more: once every worker has asked
// for one (or left), every push is out.
bool all_pushes_out(const stop_supervisor_state& st) {
  if (st.cfg.mode == train_mode::sync) return true;  // the shards stop by themselves
  return (stopping(st) || st.granted >= st.cfg.last_step) && st.active.empty();
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

// Every push is out: wait until every shard has applied it (pushes and done
// travel on different paths).
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

void watch_ticket_holder(supervisor_pointer self, std::uint32_t worker) {
  auto& st = self->state;
  auto sender = self->current_sender();
  if (!sender || st.ticket_holders.count(worker)) return;
  st.ticket_holders[worker] = caf::actor_cast<caf::actor_addr>(sender);
  self->monitor(sender);
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

// A shard is gone: pause. The chief's end request fails with `recovering`,
// which sends it reconnecting and restoring; the workers go down with the
// shard and rejoin once the chief answers their hello again.
void on_shard_down(supervisor_pointer self, std::size_t k) {
  auto& st = self->state;
  if (st.final_step >= 0) return;  // the job is over: the shards are stopping
  st.cfg.log.warn("stop_supervisor: ps " + std::to_string(k) +
                  " went down; training pauses until it is restored");
  if (st.recovering) return;
  st.recovering = true;
  ++st.epoch;
  for (auto& rp : st.end_waiters)
    rp.deliver(caf::make_error(errc::recovering, "ps " + std::to_string(k) + " went down"));
  st.end_waiters.clear();
}

void on_down(supervisor_pointer self, const caf::down_msg& dm) {
  if (!from_source(self, dm)) return;
  auto& shards = self->state.cfg.shards;
  for (std::size_t k = 0; k < shards.size(); ++k)
    if (caf::actor_cast<caf::actor_addr>(shards[k]) == dm.source) return on_shard_down(self, k);
  on_worker_down(self, dm);
}

// Every shard stands at plan.step again: the tickets restart from there, so
// the job still ends at exactly last_step; the held hellos are answered.
std::int64_t on_restore(supervisor_pointer self, recovery_plan& plan) {
  auto& st = self->state;
  st.cfg.shards = std::move(plan.shards);
  st.cfg.coordinator = std::move(plan.coordinator);
  st.cfg.saver = std::move(plan.saver);
  for (auto& s : st.cfg.shards) {
    self->monitor(s);
    self->send(s, join_atom_v);
  }
  st.granted = plan.step;
  st.reported_step = plan.step;
  st.active.clear();
  st.holding.clear();
  st.ticket_holders.clear();  // downs of old workers then match nothing
  st.draining = false;
  st.final_step = -1;
  st.recovering = false;
  ++st.epoch;
  st.cfg.log.info("stop_supervisor: every shard restored; training resumes at global step " +
                  std::to_string(plan.step));
  for (auto& rp : st.held_hellos) rp.deliver(st.granted, st.cfg.coordinator);
  st.held_hellos.clear();
  maybe_drain(self);
  return plan.step;
}

void on_report(supervisor_pointer self, std::int64_t step, float loss) {
  auto& st = self->state;
  st.last_loss = loss;
  if (step <= st.reported_step) return;
  st.reported_step = step;
  st.progress->on_step(step, loss);
}

std::int64_t current_step(const stop_supervisor_state& st) {
  return st.cfg.mode == train_mode::sync ? st.reported_step : st.granted;
}

// Asks shards, coordinator and saver at once; answers when all have (or failed).
caf::result<std::string> on_status(supervisor_pointer self) {
  auto& st = self->state;
  auto facts = std::make_shared<status_facts>();
  facts->mode = to_string(st.cfg.mode);
  facts->global_step = current_step(st);
  facts->last_step = st.cfg.last_step;
  facts->steps_per_s = st.progress->steps_per_s(facts->global_step);
  facts->loss = st.last_loss;
  facts->learning_rate = learning_rate_at(st.cfg.progress.schedule, facts->global_step);
  facts->validation = st.validation;
  facts->config_sources = st.cfg.config_sources;
  facts->expected_workers = st.cfg.workers;
  facts->shards.resize(st.cfg.shards.size());
  auto rp = self->make_response_promise<std::string>();
  auto missing = std::make_shared<std::size_t>(st.cfg.shards.size() + 2);
  auto done = [=]() mutable {
    if (--*missing == 0) rp.deliver(status_json(*facts));
  };
  const auto timeout = std::chrono::seconds(5);
  for (std::size_t k = 0; k < st.cfg.shards.size(); ++k)
    self->request(st.cfg.shards[k], timeout, stats_atom_v)
        .then(
            [=](shard_stats& s) mutable {
              facts->shards[k] =
                  shard_facts{true, s.step, s.ranges, s.dropped, s.rejected, s.replayed};
              done();
            },
            [=](caf::error&) mutable { done(); });
  self->request(st.cfg.coordinator, timeout, stats_atom_v)
      .then(
          [=](worker_stats& w) mutable {
            facts->live_workers = w.live;
            facts->dead_workers = w.gone;
            done();
          },
          [=](caf::error&) mutable { done(); });
  self->request(st.cfg.saver, timeout, stats_atom_v)
      .then(
          [=](std::string& path, double when) mutable {
            facts->last_checkpoint = path;
            auto now = std::chrono::system_clock::now().time_since_epoch();
            facts->checkpoint_age_s = std::chrono::duration<double>(now).count() - when;
            done();
          },
          [=](caf::error&) mutable { done(); });
  return rp;
}

// Sync rounds complete at the shards, not by tickets: the stop checkpoint is
// taken a few rounds ahead of shard 0, where every shard still is before it
// (rounds take a gradient from every worker; these messages take far less).
constexpr std::int64_t sync_stop_margin = 2;

void on_stop(supervisor_pointer self, const std::string& why) {
  auto& st = self->state;
  // Async and ssp drain only once every ticket is out: the job is ending then.
  const bool ending = st.draining && st.cfg.mode != train_mode::sync;
  if (stopping(st) || ending || st.final_step >= 0 || st.failure) return;
  st.stop_reason = why;
  st.cfg.log.info("stop_supervisor: stopping (" + why +
                  "): no more steps; a checkpoint follows at the step reached");
  if (st.cfg.mode != train_mode::sync) return maybe_drain(self);
  self->request(st.cfg.shards[0], std::chrono::minutes(1), await_atom_v, std::int64_t{0})
      .then(
          [=](std::int64_t now) {
            save_and_finish(self, std::min(now + sync_stop_margin, self->state.cfg.last_step));
          },
          [=](caf::error& err) { fail_job(self, std::move(err)); });
}

// A batch with a non-finite loss or gradient: skipped while within
// --max-bad-batches, else the job fails with one line saying what to try.
caf::result<std::int64_t> on_bad_batch(supervisor_pointer self, std::uint32_t worker,
                                       std::int64_t step, float loss) {
  auto& st = self->state;
  if (st.failure) return st.failure;
  const auto lr = learning_rate_at(st.cfg.progress.schedule, step);
  char numbers[128];
  std::snprintf(numbers, sizeof numbers, "(loss %g) at global step %lld with learning rate %g",
                loss, static_cast<long long>(step), lr);
  const auto where =
      "worker " + std::to_string(worker) + " got a non-finite loss or gradient " + numbers;
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

caf::result<std::int64_t, coordinator_actor> on_hello(supervisor_pointer self,
                                                      const std::string& fp) {
  auto& s = self->state;
  if (auto diff = fingerprint_difference(fp, s.cfg.fingerprint, "the chief")) {
    s.guard.refuse("a hello with other settings", self->current_sender(), " (" + *diff + ")");
    return caf::make_error(errc::config_mismatch, *diff);
  }
  if (auto sender = self->current_sender()) s.guard.admit_member(sender->node());
  if (!s.recovering) return {s.granted, s.cfg.coordinator};
  s.held_hellos.push_back(self->make_response_promise<std::int64_t, coordinator_actor>());
  return s.held_hellos.back();
}

supervisor_actor::behavior_type stop_supervisor(supervisor_pointer self, supervisor_config cfg) {
  end_on_exception(self);
  auto& st = self->state;
  st.guard.set_log(cfg.log);
  st.cfg = std::move(cfg);
  st.granted = st.cfg.start_step;
  st.reported_step = st.cfg.start_step;
  st.progress = std::make_unique<progress_reporter>(st.cfg.progress);
  st.guard.install(self);
  self->set_down_handler([=](caf::down_msg& dm) { on_down(self, dm); });
  for (auto& s : st.cfg.shards) {
    self->monitor(s);
    st.guard.admit_member(s.node());  // a ps told to stop asks us (stop_atom, why)
    self->send(s, join_atom_v);
  }
  // Workers (admitted by their hello) ask for tickets and report; status is
  // open; the rest comes from the chief's own actors (from_chief: this node).
  return {
      [=](hello_atom, const std::string& fp) { return on_hello(self, fp); },
      [=](ticket_atom, std::uint32_t worker, float loss) -> caf::result<std::int64_t> {
        if (!from_member(self, "a ticket request")) return unauthorized("ticket");
        return on_ticket(self, worker, loss);
      },
      [=](done_atom, std::uint32_t worker) {
        if (!from_member(self, "a done")) return;
        self->state.active.erase(worker);
        self->state.holding.erase(worker);
        maybe_drain(self);
      },
      [=](report_atom, std::uint32_t, std::int64_t step, float loss) {
        if (from_member(self, "a report")) on_report(self, step, loss);
      },
      [=](end_atom) -> caf::result<std::int64_t, float, std::string> {
        if (!from_chief(self, "an end request")) return unauthorized("end");
        return on_end(self);
      },
      [=](stop_atom, const std::string& why) {
        if (from_member(self, "a stop request")) on_stop(self, why);
      },
      [=](diverged_atom, std::uint32_t worker, std::int64_t step, float loss) -> caf::result<std::int64_t> {
        if (!from_member(self, "a bad batch report")) return unauthorized("diverged");
        return on_bad_batch(self, worker, step, loss);
      },
      [=](eval_atom, std::int64_t step, double accuracy, double ema_accuracy) {
        if (!from_chief(self, "an evaluation")) return;
        self->state.progress->on_eval(step, accuracy, ema_accuracy);
        self->state.validation = validation_facts{step, accuracy, ema_accuracy};
      },
      // Read-only, and `downpour status --chief=HOST:PORT` has no config to say hello with.
      [=](status_atom) { return on_status(self); },
      [=](restore_atom, recovery_plan& plan) -> caf::result<std::int64_t> {
        if (!from_chief(self, "a restore")) return unauthorized("restore");
        return on_restore(self, plan);
      },
  };
}

}  // namespace

supervisor_actor spawn_stop_supervisor(caf::actor_system& sys, supervisor_config cfg) {
  return sys.spawn(stop_supervisor, std::move(cfg));
}

}  // namespace downpour
