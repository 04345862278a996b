// The chief's run, phase by phase (actors/chief_phase.hpp draws them):
// run_chief itself starts and initialises the shards; chief_run trains
// (through the stop supervisor, recovering a lost ps as often as it
// happens) and stops the nodes.
#include "runtime/node/chief.hpp"

#include <chrono>
#include <iostream>

#include "actors/chief_phase.hpp"
#include "actors/stop_supervisor.hpp"
#include "actors/update_tally.hpp"
#include "config/durations.hpp"
#include "protocol/model_snapshot.hpp"
#include "reporting/log.hpp"
#include "runtime/files/checkpoint.hpp"
#include "runtime/files/checkpoint_dir.hpp"
#include "runtime/net/connect.hpp"
#include "runtime/net/metrics_http.hpp"
#include "runtime/node/actor_configs.hpp"
#include "runtime/node/chief_helpers.hpp"
#include "runtime/node/failover.hpp"
#include "runtime/node/hello.hpp"
#include "runtime/node/job_watch.hpp"
#include "runtime/node/local_ends.hpp"
#include "runtime/node/restore.hpp"
#include "runtime/node/stop_forwarder.hpp"

namespace downpour {
namespace {

// Pulls every shard's parameters and shadows into full flat buffers.
caf::expected<job_result> collect(caf::scoped_actor& self, const model_layout& layout,
                                  const std::vector<shard_actor>& shards) {
  caf::expected<job_result> result{job_result{}};  // done runs before gather_snapshot returns
  gather_snapshot(self.ptr(), shards, layout.size(), std::nullopt, std::chrono::seconds(60),
                  [&](caf::expected<model_snapshot> model) {
                    if (!model) {
                      result = model.error();
                      return;
                    }
                    job_result r;
                    r.params = std::move(model->params);
                    r.ema = std::move(model->ema);
                    r.rows = std::move(model->rows);
                    r.summary.global_step = model->step;
                    r.dropped = model->dropped;
                    r.replayed = model->replayed;
                    result = std::move(r);
                  });
  return result;
}

caf::error save_now(caf::scoped_actor& self, const saver_actor& saver, std::int64_t step) {
  caf::error failure;
  self->request(saver, std::chrono::minutes(10), save_atom_v, step)
      .receive([](std::string&) {}, [&](caf::error& err) { failure = std::move(err); });
  return failure;
}

// The reason every shard and the supervisor quit with: a stopped or
// diverged job ends every node of it with that status (and exit code).
caf::error end_reason(const caf::expected<job_end>& ended) {
  if (!ended) return ended.error() == errc::diverged ? ended.error() : caf::none;
  if (!ended->stop_reason.empty())
    return caf::make_error(errc::interrupted, "the job was stopped (" + ended->stop_reason + ")");
  return caf::none;
}

// Stopped: no evaluation (the stop must be quick); the checkpoint says where.
job_result stopped_result(const options& opts, const job_end& end, double wall,
                          std::int64_t start_step, const logger& log) {
  job_result r;
  auto& sum = r.summary;
  sum.status = job_status::stopped;
  sum.global_step = end.step;
  sum.loss = end.loss;
  sum.wall_s = wall;
  sum.steps_per_s = wall > 0 ? static_cast<double>(end.step - start_step) / wall : 0.0;
  sum.checkpoint = opts.checkpoint_dir + "/" + checkpoint_name(end.step);
  log.info("stopped by " + end.stop_reason + " at global step " + std::to_string(end.step) +
           "; checkpoint " + sum.checkpoint + "; the same command resumes from there");
  return r;
}

// A sparse variable has no moving average: the EMA's figure takes the
// dense shadows with the rows as trained.
void finish_summary(job_result& r, const job_model& job,
                    const row_tables_spec& rows, double wall,
                    std::int64_t start_step) {
  auto& sum = r.summary;
  sum.wall_s = wall;
  sum.steps_per_s = wall > 0 ? static_cast<double>(sum.global_step - start_step) / wall : 0.0;
  const auto both = evaluate_test(*job.net, r.params.data(), r.ema.data(), r.rows, rows, job.data);
  add_test_figures(sum, both.raw, both.ema);
}

supervisor_config with_tally(supervisor_config c, std::shared_ptr<update_tally> tally) {
  c.tally = std::move(tally);
  return c;
}

// The end's counts of updates (summary.json, the final line).
void add_counts(run_summary& sum, const update_tally& tally) {
  const update_counts counts = tally.counts();
  sum.updates_applied = counts.applied;
  sum.updates_lost = counts.lost;
  sum.failover_pause_s = counts.failover_pause_s;
}

// What changes when a lost ps comes back: its handle and the helpers.
struct chief_epoch {
  std::vector<shard_actor> shards;
  chief_helpers helpers;
};

// The chief from training on: the stop supervisor and its helpers, the
// workers of this process and the watch on them, built once every shard is
// initialised. Its members end in reverse: the metrics endpoint first, the
// stop forwarding after the nodes are stopped.
class chief_run {
 public:
  chief_run(caf::actor_system& sys, const options& opts, const job_model& job,
            const start_state& start, std::int64_t start_step, std::vector<shard_actor> shards,
            const start_workers_fn& start_workers, stop_switch* stops);
  chief_run(const chief_run&) = delete;
  chief_run& operator=(const chief_run&) = delete;

  caf::expected<job_end> train();
  caf::expected<job_result> stop_nodes(const caf::expected<job_end>& ended);

 private:
  caf::error start_workers();
  caf::error recover();
  void await_old_workers();
  caf::error resume(std::vector<shard_actor> shards, recovery_plan plan);
  caf::error restore_supervisor(recovery_plan plan, const chief_helpers& helpers);
  void end_actors(const caf::error& reason);

  caf::actor_system& sys_;
  const options& opts_;
  const job_model& job_;
  const logger log_;
  const start_state& start_;
  const std::int64_t start_step_;
  const start_workers_fn& start_workers_;
  const std::chrono::steady_clock::time_point began_ = std::chrono::steady_clock::now();
  caf::scoped_actor self_;
  chief_epoch epoch_;
  std::shared_ptr<update_tally> tally_ = std::make_shared<update_tally>(start_step_);
  supervisor_actor supervisor_;
  stop_forwarder to_supervisor_;
  armed_stop stop_;
  job_watch watch_;
  std::vector<worker_actor> local_workers_;
  std::vector<std::uint32_t> hosts_;  // the ps serving each shard (a failover moves one)
  caf::expected<metrics_handle> metrics_;
};

chief_run::chief_run(caf::actor_system& sys, const options& opts, const job_model& job,
                     const start_state& start, std::int64_t start_step,
                     std::vector<shard_actor> shards, const start_workers_fn& start_workers,
                     stop_switch* stops)
    : sys_(sys),
      opts_(opts),
      job_(job),
      log_(node_logger(opts, role_kind::worker, 0)),
      start_(start),
      start_step_(start_step),
      start_workers_(start_workers),
      self_(sys),
      epoch_{shards, spawn_helpers(sys, opts, job.layout, shards, start_step)},
      supervisor_(spawn_stop_supervisor(
          sys, with_tally(supervisor_config_for(opts, job.layout, start, start_step, shards,
                                                epoch_.helpers.coordinator, epoch_.helpers.saver),
                          tally_))),
      to_supervisor_(sys, supervisor_),
      stop_(stops,
            [this](const std::string& why) { to_supervisor_.forward(why + " on " + log_.node()); }),
      watch_(sys, supervisor_),
      metrics_(serve_chief_metrics(sys, opts, supervisor_)) {
  for (std::uint32_t k = 0; k < shards.size(); ++k) hosts_.push_back(k);
  epoch_.helpers.evaluator = spawn_evaluator_for(sys, opts, job, shards, supervisor_, start_step);
  watch_helpers(watch_, epoch_.helpers);
  for (const auto& s : shards) watch_.watch(s);  // a local job's
}

// training: the start checkpoint of a fresh job, the workers, and the wait
// for the end the supervisor tells, through every recovery.
caf::expected<job_end> chief_run::train() {
  const bool at_end = start_step_ >= opts_.last_step;
  if (at_end)
    log_.info("checkpoint: the job is already at its last step " + std::to_string(start_step_) +
              "; nothing to train");
  if (!metrics_) return metrics_.error();
  if (!at_end && !start_.restored)
    if (auto err = save_now(self_, epoch_.helpers.saver, start_step_)) return err;
  if (auto err = start_workers()) return err;
  for (;;) {
    auto end = watch_.await_end(self_);
    if (end || end.error() != errc::recovering) return end;
    if (auto err = recover()) return err;
  }
}

// Starts the workers and watches them; they are this node's (the chief
// ends them at the end of the job).
caf::error chief_run::start_workers() {
  auto workers = start_workers_(supervisor_, epoch_.helpers.coordinator, epoch_.shards);
  if (!workers) return workers.error();
  for (const auto& w : *workers) {
    watch_.watch(w);
    local_workers_.push_back(w);
  }
  return caf::none;
}

// recovering: nothing more is saved (the helpers stop at once) until every
// shard is back and restored; then fresh helpers, the supervisor resumes and
// the workers start again. A ps that does not come back ends the live ones
// with the reason.
caf::error chief_run::recover() {
  stop_helpers(self_, epoch_.helpers);
  if (opts_.ps_replicas > 1 && opts_.role != role_kind::local) {
    auto moved = fail_over(sys_, opts_, job_.layout, epoch_.shards, hosts_);
    if (moved) {
      hosts_ = moved->hosts;
      await_old_workers();
      return resume(std::move(moved->shards), {moved->step, {}, {}, {}, hosts_, moved->lost,
                                               recovery_kind::failover, moved->owed});
    }
    log_.warn("chief: no failover (" + describe(moved.error()) +
              "); every shard rolls back to the newest checkpoint");
  }
  auto back = recover_cluster(sys_, opts_, job_.layout, epoch_.shards);
  if (!back) {
    for (auto& s : epoch_.shards) self_->send_exit(s, back.error());
    return back.error();
  }
  // A shard reconnected is served by its own ps again.
  for (std::size_t k = 0; k < hosts_.size(); ++k)
    if (back->shards[k] != epoch_.shards[k]) hosts_[k] = static_cast<std::uint32_t>(k);
  return resume(std::move(back->shards),
                {back->step, {}, {}, {}, hosts_, 0, recovery_kind::rollback});
}

// This node's trainers of the lost epoch end with the ps they lost: their
// unanswered pushes are with the keeper before the next ones send them again.
void chief_run::await_old_workers() {
  std::vector<named_actor> old;
  for (const auto& w : local_workers_) old.push_back({"worker", caf::actor_cast<caf::actor>(w)});
  await_local_ends(self_, old, std::chrono::seconds(10), log_);
  local_workers_.clear();
}

// Fresh helpers on the shards as they came back; the supervisor resumes and
// the workers start again.
caf::error chief_run::resume(std::vector<shard_actor> shards, recovery_plan plan) {
  auto helpers = spawn_helpers(sys_, opts_, job_.layout, shards, plan.step);
  const auto step = plan.step;
  plan.shards = shards;
  if (auto err = restore_supervisor(std::move(plan), helpers)) return err;
  helpers.evaluator = spawn_evaluator_for(sys_, opts_, job_, shards, supervisor_, step);
  epoch_ = chief_epoch{std::move(shards), helpers};
  watch_helpers(watch_, epoch_.helpers);
  return start_workers();
}

caf::error chief_run::restore_supervisor(recovery_plan plan, const chief_helpers& helpers) {
  plan.coordinator = helpers.coordinator;
  plan.saver = helpers.saver;
  caf::error failure;
  self_->request(supervisor_, std::chrono::seconds(60), restore_atom_v, std::move(plan))
      .receive([](std::int64_t) {}, [&](caf::error& err) { failure = std::move(err); });
  return failure;
}

// stopping_nodes: the model is collected (not for a stop: it must be quick),
// then every node ends with the job's reason.
caf::expected<job_result> chief_run::stop_nodes(const caf::expected<job_end>& ended) {
  const double wall = seconds_since(began_);
  if (ended && !ended->stop_reason.empty()) {
    end_actors(end_reason(ended));
    auto stopped = stopped_result(opts_, *ended, wall, start_step_, log_);
    add_counts(stopped.summary, *tally_);
    return stopped;
  }
  auto result =
      ended ? collect(self_, job_.layout, epoch_.shards) : caf::expected<job_result>{ended.error()};
  end_actors(end_reason(ended));
  if (!result) return result;
  if (start_step_ < opts_.last_step) result->summary.loss = ended->loss;  // else none trained
  finish_summary(*result, job_, row_tables_for(opts_, job_.layout), wall, start_step_);
  add_counts(result->summary, *tally_);
  return result;
}

void chief_run::end_actors(const caf::error& reason) {
  for (auto& s : epoch_.shards)
    if (reason)
      self_->send_exit(s, reason);
    else
      self_->send(s, stop_atom_v);
  stop_helpers(self_, epoch_.helpers);
  for (auto& w : local_workers_)
    self_->send_exit(w, reason ? reason : caf::error{caf::exit_reason::user_shutdown});
  // Not the reason: with it, the published supervisor's end kept the
  // detached saver's thread from ever finishing (CAF 0.17.6, measured).
  // Workers learn the end from their tickets or from the shards.
  self_->send_exit(supervisor_, caf::exit_reason::user_shutdown);  // from this node: obeyed
  await_local_ends(self_, started_here(supervisor_, epoch_.helpers, local_workers_),
                   std::chrono::seconds(30), log_);
}

}  // namespace

caf::expected<job_result> run_chief(caf::actor_system& sys, const options& opts,
                                    const job_model& job, std::vector<shard_actor> shards,
                                    const start_workers_fn& start_workers, stop_switch* stops) {
  chief_lifecycle life;  // starting: the checkpoint directory and every ps's hello
  auto give_up = [&life](caf::error err) {  // nothing was started: nothing to stop
    life.enter(chief_phase::failed);
    life.enter(chief_phase::done);
    return err;
  };
  const logger log = node_logger(opts, role_kind::worker, 0);
  prepare_checkpoint_dir(opts, log);
  if (auto err = check_peers(sys, opts, job.layout, shards, timespan_of(opts.connect_timeout_s)))
    return give_up(std::move(err));
  life.enter(chief_phase::initialising_shards);
  const start_state start = restore_or_init(opts, job.layout, log);
  auto start_step = restore_shards(sys, opts, job.layout, start, shards);
  if (!start_step) return give_up(start_step.error());
  life.enter(chief_phase::training);
  chief_run run{sys, opts, job, start, *start_step, std::move(shards), start_workers, stops};
  auto ended = run.train();
  // The supervisor walked on from training to the end it told, or the job failed.
  life = chief_lifecycle{ended ? chief_phase::stopping_nodes : chief_phase::failed};
  if (!ended) life.enter(chief_phase::stopping_nodes);
  auto result = run.stop_nodes(ended);
  life.enter(chief_phase::done);
  return result;
}

}  // namespace downpour
