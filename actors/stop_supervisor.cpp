#include "actors/stop_supervisor.hpp"

#include <map>
#include <memory>
#include <set>

#include "actors/failure.hpp"
#include "actors/peer_guard.hpp"
#include "runtime/cluster_config.hpp"
#include "runtime/status_json.hpp"

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
  std::vector<caf::typed_response_promise<std::int64_t, float>> end_waiters;
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
  st.final_step = step;
  st.progress->finish(step);
  for (auto& rp : st.end_waiters) rp.deliver(step, st.last_loss);
  st.end_waiters.clear();
}

bool all_pushes_out(const stop_supervisor_state& st) {
  if (st.cfg.mode == train_mode::sync) return true;  // the shards stop by themselves
  return st.granted >= st.cfg.last_step && st.active.empty();
}

// Every push is out: wait until every shard has applied it (pushes and done
// travel on different paths).
void maybe_drain(supervisor_pointer self) {
  auto& st = self->state;
  if (st.recovering || st.draining || st.end_waiters.empty() || !all_pushes_out(st)) return;
  st.draining = true;
  auto remaining = std::make_shared<std::size_t>(st.cfg.shards.size());
  if (*remaining == 0) return finish(self, st.cfg.last_step);
  const auto epoch = st.epoch;
  for (auto& shard : st.cfg.shards)
    self->request(shard, caf::infinite, await_atom_v, st.cfg.last_step)
        .then(
            [=](std::int64_t) {
              if (self->state.epoch != epoch) return;
              if (--*remaining == 0) finish(self, self->state.cfg.last_step);
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
  watch_ticket_holder(self, worker);
  st.holding.erase(worker);  // asking again means its last push went out first
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
  for (auto& s : st.cfg.shards) self->monitor(s);
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

caf::result<std::int64_t, float> on_end(supervisor_pointer self) {
  auto& st = self->state;
  if (st.final_step >= 0) return {st.final_step, st.last_loss};
  if (st.recovering) return caf::make_error(errc::recovering, "a ps is down");
  st.end_waiters.push_back(self->make_response_promise<std::int64_t, float>());
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
  for (auto& s : st.cfg.shards) self->monitor(s);
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
      [=](end_atom) -> caf::result<std::int64_t, float> {
        if (!from_chief(self, "an end request")) return unauthorized("end");
        return on_end(self);
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
