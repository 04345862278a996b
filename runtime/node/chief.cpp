#include "runtime/node/chief.hpp"

#include <chrono>
#include <iostream>

#include "actors/checkpoint_saver.hpp"
#include "actors/evaluator.hpp"
#include "reporting/log.hpp"
#include "protocol/model_snapshot.hpp"
#include "protocol/placement.hpp"
#include "config/durations.hpp"
#include "reporting/status_json.hpp"
#include "actors/stop_supervisor.hpp"
#include "actors/sync_coordinator.hpp"
#include "runtime/files/checkpoint.hpp"
#include "runtime/files/checkpoint_dir.hpp"
#include "runtime/net/connect.hpp"
#include "runtime/net/metrics_http.hpp"
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

progress_config progress_for(const options& opts, const start_state& start,
                             std::int64_t start_step) {
  progress_config p;
  p.resumed = start.restored;
  p.metrics_path = opts.checkpoint_dir + "/metrics.csv";
  p.schedule = schedule_for(opts);
  p.start_step = start_step;
  p.last_step = opts.last_step;
  p.quiet = opts.quiet;
  p.log = node_logger(opts, role_kind::worker, 0);
  return p;
}

saver_config saver_for(const options& opts, const model_layout& layout,
                       const std::vector<shard_actor>& shards, std::int64_t start_step) {
  return saver_config{shards,
                      layout,
                      to_string(opts.mode),
                      [dir = opts.checkpoint_dir, keep = opts.keep_checkpoints](
                          const checkpoint& c) { return save_checkpoint(dir, c, keep); },
                      opts.save_checkpoint_secs,
                      opts.save_checkpoint_steps,
                      start_step,
                      opts.last_step,
                      node_logger(opts, role_kind::worker, 0)};
}

caf::error save_now(caf::scoped_actor& self, const saver_actor& saver, std::int64_t step) {
  caf::error failure;
  self->request(saver, std::chrono::minutes(10), save_atom_v, step)
      .receive([](std::string&) {}, [&](caf::error& err) { failure = std::move(err); });
  return failure;
}

// The reason every shard and the supervisor quit with: a stopped or
// diverged job ends every node of it with that status (and exit code).
caf::error end_reason(const caf::error& failure, const job_end& end) {
  if (failure == errc::diverged) return failure;
  if (!failure && !end.stop_reason.empty())
    return caf::make_error(errc::interrupted, "the job was stopped (" + end.stop_reason + ")");
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
                    const std::optional<sparse_table_spec>& rows, double wall,
                    std::int64_t start_step) {
  auto& sum = r.summary;
  sum.wall_s = wall;
  sum.steps_per_s = wall > 0 ? static_cast<double>(sum.global_step - start_step) / wall : 0.0;
  const auto both = evaluate_test(*job.net, r.params.data(), r.ema.data(), r.rows, rows, job.data);
  const accuracy_report& raw = both.raw;
  sum.test_accuracy = raw.overall;
  sum.ema_test_accuracy = both.ema.overall;
  if (rows) {
    sum.test_log_loss = raw.log_loss;
    sum.test_auc = raw.auc;
  }
}

// The chief's helpers hold shard handles: after a ps came back they are
// replaced by fresh ones (the supervisor, published, stays and is told).
struct chief_helpers {
  coordinator_actor coordinator;
  saver_actor saver;
  evaluator_actor evaluator;
};

chief_helpers spawn_helpers(caf::actor_system& sys, const options& opts,
                            const model_layout& layout, const std::vector<shard_actor>& shards,
                            std::int64_t step) {
  chief_helpers h;
  h.coordinator = spawn_sync_coordinator(
      sys, coordinator_config{opts.mode, opts.worker_hosts.size(), replicas_for(opts),
                              opts.staleness, shards, node_logger(opts, role_kind::worker, 0)});
  h.saver = spawn_checkpoint_saver(sys, saver_for(opts, layout, shards, step));
  return h;
}

evaluator_actor spawn_evaluator_for(caf::actor_system& sys, const options& opts,
                                    const job_model& job, const std::vector<shard_actor>& shards,
                                    const supervisor_actor& supervisor, std::int64_t step) {
  if (opts.eval_every <= 0 || job.data.validation->size() == 0) return {};
  return spawn_evaluator(
      sys,
      evaluator_config{shards, job.net, job.layout.size(), row_table_for(opts, job.layout),
                       job.data.validation, opts.eval_every, opts.last_step, supervisor},
      step);
}

void watch_helpers(job_watch& watch, const chief_helpers& h) {
  watch.watch(h.coordinator);
  watch.watch(h.saver);
  watch.watch(h.evaluator);
}

// Starts the workers and watches them; they are this node's (the chief
// ends them at the end of the job).
caf::expected<std::vector<worker_actor>> start_watched(job_watch& watch,
                                                       const start_workers_fn& start_workers,
                                                       const supervisor_actor& supervisor,
                                                       const coordinator_actor& coordinator,
                                                       const std::vector<shard_actor>& shards) {
  auto workers = start_workers(supervisor, coordinator, shards);
  if (!workers) return workers.error();
  for (const auto& w : *workers) watch.watch(w);
  return workers;
}

// Everything the chief started on its node, for the bounded wait at the end.
std::vector<named_actor> started_here(const supervisor_actor& supervisor, const chief_helpers& h,
                                      const std::vector<worker_actor>& workers) {
  std::vector<named_actor> all{{"the stop supervisor", caf::actor_cast<caf::actor>(supervisor)},
                               {"the sync coordinator", caf::actor_cast<caf::actor>(h.coordinator)},
                               {"the checkpoint saver", caf::actor_cast<caf::actor>(h.saver)},
                               {"the evaluator", caf::actor_cast<caf::actor>(h.evaluator)}};
  for (std::size_t i = 0; i < workers.size(); ++i)
    all.push_back({"a local worker (" + std::to_string(i + 1) + " of " +
                       std::to_string(workers.size()) + ")",
                   caf::actor_cast<caf::actor>(workers[i])});
  return all;
}

// From self: an actor obeys exits only from a known sender of its own node.
void stop_helpers(caf::scoped_actor& self, const chief_helpers& h) {
  for (auto a : {caf::actor_cast<caf::actor>(h.coordinator), caf::actor_cast<caf::actor>(h.saver),
                 caf::actor_cast<caf::actor>(h.evaluator)})
    if (a) self->send_exit(a, caf::exit_reason::user_shutdown);
}

// What changes when a lost ps comes back: its handle and the helpers.
struct chief_epoch {
  std::vector<shard_actor> shards;
  chief_helpers helpers;
};

// A ps went down: nothing more is saved (the helpers stop at once) until
// every shard is back and restored; then fresh helpers, and the supervisor
// resumes. A ps that does not come back ends the live ones with the reason.
caf::expected<chief_epoch> recover(caf::actor_system& sys, caf::scoped_actor& self,
                                   const options& opts, const job_model& job,
                                   const supervisor_actor& supervisor, const chief_epoch& old) {
  stop_helpers(self, old.helpers);
  auto back = recover_cluster(sys, opts, job.layout, old.shards);
  if (!back) {
    for (auto& s : old.shards) self->send_exit(s, back.error());
    return back.error();
  }
  auto helpers = spawn_helpers(sys, opts, job.layout, back->shards, back->step);
  chief_epoch next{std::move(back->shards), helpers};
  caf::error failure;
  self->request(
          supervisor, std::chrono::seconds(60), restore_atom_v,
          recovery_plan{back->step, next.shards, next.helpers.coordinator, next.helpers.saver})
      .receive([](std::int64_t) {}, [&](caf::error& err) { failure = std::move(err); });
  if (failure) return failure;
  next.helpers.evaluator =
      spawn_evaluator_for(sys, opts, job, next.shards, supervisor, back->step);
  return next;
}

}  // namespace

caf::expected<job_result> run_chief(caf::actor_system& sys, const options& opts,
                                    const job_model& job, std::vector<shard_actor> shards,
                                    const start_workers_fn& start_workers, stop_switch* stops) {
  const model_layout& layout = job.layout;
  const logger log = node_logger(opts, role_kind::worker, 0);
  prepare_checkpoint_dir(opts, log);
  if (auto err = check_peers(sys, opts, layout, shards, timespan_of(opts.connect_timeout_s)))
    return err;
  caf::scoped_actor self{sys};
  const start_state start = restore_or_init(opts, layout, log);
  auto start_step = restore_shards(sys, opts, layout, start, shards);
  if (!start_step) return start_step.error();
  auto clock_start = std::chrono::steady_clock::now();
  chief_epoch epoch{shards, spawn_helpers(sys, opts, layout, shards, *start_step)};
  supervisor_config scfg{job_fingerprint(opts, layout),
                         *start_step,
                         opts.last_step,
                         shards,
                         progress_for(opts, start, *start_step),
                         opts.mode,
                         epoch.helpers.coordinator,
                         epoch.helpers.saver,
                         opts.worker_hosts.size(),
                         log,
                         opts.sources,
                         opts.max_bad_batches,
                         status_json};
  auto supervisor = spawn_stop_supervisor(sys, std::move(scfg));
  const stop_forwarder to_supervisor{sys, supervisor};
  armed_stop stop{stops, [&to_supervisor, log](const std::string& why) {
                    to_supervisor.forward(why + " on " + log.node());
                  }};
  epoch.helpers.evaluator =
      spawn_evaluator_for(sys, opts, job, shards, supervisor, *start_step);
  job_watch watch{sys, supervisor};
  std::vector<worker_actor> local_workers;
  auto start_all = [&]() -> caf::error {
    auto started =
        start_watched(watch, start_workers, supervisor, epoch.helpers.coordinator, epoch.shards);
    if (!started) return started.error();
    local_workers.insert(local_workers.end(), started->begin(), started->end());
    return caf::none;
  };
  watch_helpers(watch, epoch.helpers);
  for (const auto& s : shards) watch.watch(s);  // a local job's
  auto shut_down = [&](const caf::error& reason) {
    for (auto& s : epoch.shards)
      if (reason)
        self->send_exit(s, reason);
      else
        self->send(s, stop_atom_v);
    stop_helpers(self, epoch.helpers);
    for (auto& w : local_workers)
      self->send_exit(w, reason ? reason : caf::error{caf::exit_reason::user_shutdown});
    // Not the reason: with it, the published supervisor's end kept the
    // detached saver's thread from ever finishing (CAF 0.17.6, measured).
    // Workers learn the end from their tickets or from the shards.
    self->send_exit(supervisor, caf::exit_reason::user_shutdown);  // from this node: obeyed
    await_local_ends(self, started_here(supervisor, epoch.helpers, local_workers),
                     std::chrono::seconds(30), log);
  };
  caf::error failure;
  auto metrics = serve_chief_metrics(sys, opts, supervisor);
  if (!metrics) failure = metrics.error();
  const bool at_end = *start_step >= opts.last_step;
  if (at_end)
    log.info("checkpoint: the job is already at its last step " + std::to_string(*start_step) +
             "; nothing to train");
  else if (!start.restored && !failure)
    failure = save_now(self, epoch.helpers.saver, *start_step);  // the start checkpoint
  if (!failure)
    failure = start_all();
  job_end ended;
  while (!failure) {
    auto end = watch.await_end(self);
    if (end) {
      ended = std::move(*end);
      break;
    }
    if (end.error() != errc::recovering) {
      failure = end.error();
      break;
    }
    auto next = recover(sys, self, opts, job, supervisor, epoch);
    if (!next) {
      failure = next.error();
      break;
    }
    epoch = std::move(*next);
    watch_helpers(watch, epoch.helpers);
    failure = start_all();
  }
  const bool stopped = !failure && !ended.stop_reason.empty();
  // The final one: at last_step, or where the workers' passes ended.
  if (!failure && !at_end && !stopped) failure = save_now(self, epoch.helpers.saver, ended.step);
  double wall =
      seconds_since(clock_start);
  if (stopped) {
    shut_down(end_reason(failure, ended));
    return stopped_result(opts, ended, wall, *start_step, log);
  }
  auto result = failure ? caf::expected<job_result>{failure} : collect(self, layout, epoch.shards);
  shut_down(end_reason(failure, ended));
  if (!result) return result;
  if (!at_end) result->summary.loss = ended.loss;  // none: nothing was trained
  finish_summary(*result, job, row_table_for(opts, layout), wall, *start_step);
  return result;
}

}  // namespace downpour
