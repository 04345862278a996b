#include "runtime/node/actor_configs.hpp"

#include <algorithm>

#include "model/dense_rules.hpp"
#include "model/sync_rule.hpp"
#include "protocol/placement.hpp"
#include "reporting/status_json.hpp"
#include "runtime/files/checkpoint.hpp"

namespace downpour {

shard_config shard_config_for(const options& opts, const model_layout& layout, std::size_t index) {
  shard_config c;
  c.index = static_cast<std::uint32_t>(index);
  c.fingerprint = job_fingerprint(opts, layout);
  c.secret = opts.cluster_secret;
  c.schedule = schedule_for(opts);
  c.ema_decay = opts.ema_decay;
  c.last_step = opts.last_step;
  c.mode = opts.mode;
  c.required = replicas_for(opts);
  c.trainers = opts.trainers;
  c.wire = opts.wire;
  c.log = node_logger(opts, role_kind::ps, index);
  c.rows = row_tables_for(opts, layout);
  c.dense = layout.variables();
  c.replicas = opts.ps_replicas;
  return c;
}

worker_config worker_config_for(const options& opts, trainer_seat seat, const job_model& job,
                                std::vector<shard_link> shards, supervisor_actor supervisor,
                                coordinator_actor coordinator) {
  worker_config w;
  const std::size_t index = seat.task * opts.trainers + seat.trainer;
  w.index = static_cast<std::uint32_t>(index);
  w.net = job.net;
  w.model_size = job.layout.size();
  w.batch_size = opts.batch_size;
  w.log_every = opts.log_every;
  w.batch_seed = worker_batch_seed(opts.seed, index);
  w.layouts = partition(job.layout, shards.size(), opts.placement);
  const auto& dense = job.layout.variables();
  w.dense_sgd_only = std::all_of(dense.begin(), dense.end(), plain_sgd);
  w.train = job.data.train;
  w.stream = job.data.stream;
  w.shards = std::move(shards);
  w.supervisor = std::move(supervisor);
  w.coordinator = std::move(coordinator);
  w.mode = opts.mode;
  w.pipeline = opts.pipeline;
  w.staleness = opts.staleness;
  w.ticket_lease = opts.ticket_lease;
  w.wire = opts.wire;
  w.schedule = schedule_for(opts);
  w.last_step = opts.last_step;
  w.gradients_per_step = gradients_per_worker(replicas_for(opts), trainer_count(opts));
  if (!job.layout.rows().empty()) {
    w.row_bounds = row_boundaries(job.layout.rows().keys(), w.shards.size());
    w.row_keys = job.layout.rows();
  }
  w.log = node_logger(opts, role_kind::worker, seat.task);
  return w;
}

// Every log line of the chief's helpers is the chief's (worker 0's node).
coordinator_config coordinator_config_for(const options& opts, std::vector<shard_actor> shards) {
  coordinator_config c;
  c.mode = opts.mode;
  c.workers = trainer_count(opts);
  c.replicas_to_aggregate = replicas_for(opts);
  c.staleness = opts.staleness;
  c.shards = std::move(shards);
  c.log = node_logger(opts, role_kind::worker, 0);
  return c;
}

saver_config saver_config_for(const options& opts, const model_layout& layout,
                              std::vector<shard_actor> shards, std::int64_t start_step) {
  saver_config c;
  c.shards = std::move(shards);
  c.layout = layout;
  c.mode = to_string(opts.mode);
  c.write = [dir = opts.checkpoint_dir, keep = opts.keep_checkpoints](const checkpoint& ckpt) {
    return save_checkpoint(dir, ckpt, keep);
  };
  c.every_secs = opts.save_checkpoint_secs;
  c.every_steps = opts.save_checkpoint_steps;
  c.start_step = start_step;
  c.last_step = opts.last_step;
  c.log = node_logger(opts, role_kind::worker, 0);
  return c;
}

evaluator_config evaluator_config_for(const options& opts, const job_model& job,
                                      std::vector<shard_actor> shards,
                                      supervisor_actor supervisor) {
  evaluator_config c;
  c.shards = std::move(shards);
  c.net = job.net;
  c.model_size = job.layout.size();
  c.rows = row_tables_for(opts, job.layout);
  c.validation = job.data.validation;
  c.every = opts.eval_every;
  c.last_step = opts.last_step;
  c.supervisor = std::move(supervisor);
  return c;
}

namespace {

progress_config progress_config_for(const options& opts, const start_state& start,
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

}  // namespace

supervisor_config supervisor_config_for(const options& opts, const model_layout& layout,
                                        const start_state& start, std::int64_t start_step,
                                        std::vector<shard_actor> shards,
                                        coordinator_actor coordinator, saver_actor saver) {
  supervisor_config c;
  c.fingerprint = job_fingerprint(opts, layout);
  c.secret = opts.cluster_secret;
  c.start_step = start_step;
  c.last_step = opts.last_step;
  c.shards = std::move(shards);
  c.progress = progress_config_for(opts, start, start_step);
  c.mode = opts.mode;
  c.coordinator = std::move(coordinator);
  c.saver = std::move(saver);
  c.workers = trainer_count(opts);
  c.trainers = opts.trainers;
  c.listed_tasks = opts.worker_hosts.size();
  if (streams_input(opts))
    c.joins_refused = "the job streams its input, split among the " +
                      std::to_string(opts.worker_hosts.size()) +
                      " listed workers: its data plan is fixed (docs/input.md)";
  c.log = node_logger(opts, role_kind::worker, 0);
  c.config_sources = opts.sources;
  c.max_bad_batches = opts.max_bad_batches;
  c.render_status = status_json;
  return c;
}

}  // namespace downpour
