// The stop supervisor's view of the job for people: progress lines, the
// newest evaluation, and status requests, answered with facts gathered from
// the shards, the coordinator and the saver at once and rendered by the
// renderer the chief gave (runtime/status_json.hpp).
#include <algorithm>
#include <chrono>

#include "actors/parameter_shard.hpp"
#include "actors/supervisor_state.hpp"

namespace downpour {
namespace {

// A status request waits this long for each actor; a silent one counts as
// unreachable.
constexpr auto status_timeout = std::chrono::seconds(5);

std::int64_t current_step(const stop_supervisor_state& st) {
  return st.cfg.mode == train_mode::sync ? st.reported_step : counted_step(st);
}

// The job's state as status and /metrics name it (reporting/status.hpp).
std::string job_state(const stop_supervisor_state& st) {
  if (st.life.is(chief_phase::failed)) return "failed";
  if (st.life.is(chief_phase::stopping_nodes)) return told_to_stop(st) ? "stopped" : "completed";
  if (st.life.is(chief_phase::recovering)) return "recovering";
  if (told_to_stop(st)) return "stopping";
  return "training";
}

// What the supervisor knows itself; the others' parts are filled in as they answer.
status_facts own_facts(const stop_supervisor_state& st) {
  status_facts facts;
  facts.mode = to_string(st.cfg.mode);
  facts.state = job_state(st);
  facts.bad_batches_skipped = std::min(st.bad_batches, st.cfg.max_bad_batches);
  facts.global_step = current_step(st);
  facts.last_step = st.cfg.last_step;
  facts.steps_per_s = st.progress->steps_per_s(facts.global_step);
  const update_counts counts = st.cfg.tally->counts();
  facts.updates_applied = counts.applied;
  facts.updates_lost = counts.lost;
  facts.failover_pause_s = counts.failover_pause_s;
  facts.loss = st.last_loss;
  facts.learning_rate = learning_rate_at(st.cfg.progress.schedule, facts.global_step);
  facts.validation = st.validation;
  facts.config_sources = st.cfg.config_sources;
  facts.expected_workers = st.cfg.workers;
  for (const auto& [task, node] : st.joined)
    for (std::size_t t = 0; t < st.cfg.trainers; ++t)
      facts.joined_workers.push_back(static_cast<std::uint32_t>(task * st.cfg.trainers + t));
  facts.shards.resize(st.cfg.shards.size());
  return facts;
}

using facts_pointer = std::shared_ptr<status_facts>;
using answered_fn = std::function<void()>;

void ask_shards(supervisor_pointer self, facts_pointer facts, answered_fn answered) {
  auto& shards = self->state.cfg.shards;
  for (std::size_t k = 0; k < shards.size(); ++k)
    self->request(shards[k], status_timeout, stats_atom_v)
        .then(
            [=](shard_stats& s) {
              facts->shards[k] = facts_of(s);
              for (const auto& p : s.positions) merge_position(facts->positions, p.worker, p.at);
              answered();
            },
            [=](caf::error&) { answered(); });
}

void ask_coordinator(supervisor_pointer self, facts_pointer facts, answered_fn answered) {
  self->request(self->state.cfg.coordinator, status_timeout, stats_atom_v)
      .then(
          [=](worker_stats& w) {
            facts->live_workers = w.live;
            facts->dead_workers = w.gone;
            answered();
          },
          [=](caf::error&) { answered(); });
}

void ask_saver(supervisor_pointer self, facts_pointer facts, answered_fn answered) {
  self->request(self->state.cfg.saver, status_timeout, stats_atom_v)
      .then(
          [=](std::string& path, double when) {
            facts->last_checkpoint = path;
            auto now = std::chrono::system_clock::now().time_since_epoch();
            facts->checkpoint_age_s = std::chrono::duration<double>(now).count() - when;
            answered();
          },
          [=](caf::error&) { answered(); });
}

}  // namespace

void on_report(supervisor_pointer self, std::int64_t step, float loss) {
  auto& st = self->state;
  st.last_loss = loss;
  if (step <= st.reported_step) return;
  st.cfg.tally->record_applied(step - st.reported_step);
  st.reported_step = step;
  end_pause(st);
  st.progress->on_step(step, loss);
}

void on_eval(supervisor_pointer self, std::int64_t step, double accuracy, double ema_accuracy) {
  self->state.progress->on_eval(step, accuracy, ema_accuracy);
  self->state.validation = validation_facts{step, accuracy, ema_accuracy};
}

// Asks shards, coordinator and saver at once; answers when all have (or failed).
caf::result<std::string> on_status(supervisor_pointer self) {
  auto& st = self->state;
  if (!st.cfg.render_status)
    return caf::make_error(caf::sec::unexpected_message, "this supervisor renders no status");
  auto facts = std::make_shared<status_facts>(own_facts(st));
  auto rp = self->make_response_promise<std::string>();
  auto missing = std::make_shared<std::size_t>(st.cfg.shards.size() + 2);
  const auto render = st.cfg.render_status;
  answered_fn answered = [=]() mutable {
    if (--*missing == 0) rp.deliver(render(*facts));
  };
  ask_shards(self, facts, answered);
  ask_coordinator(self, facts, answered);
  ask_saver(self, facts, answered);
  return rp;
}

}  // namespace downpour
