#include "runtime/node/actor_configs.hpp"

#include "protocol/placement.hpp"
#include "model/sync_rule.hpp"

namespace downpour {

shard_config shard_config_for(const options& opts, const model_layout& layout, std::size_t index) {
  return shard_config{static_cast<std::uint32_t>(index),
                      job_fingerprint(opts, layout),
                      schedule_for(opts),
                      opts.ema_decay,
                      opts.last_step,
                      opts.mode,
                      replicas_for(opts),
                      opts.wire,
                      node_logger(opts, role_kind::ps, index),
                      row_table_for(opts, layout)};
}

worker_config worker_config_for(const options& opts, std::size_t index, const job_model& job,
                                std::vector<shard_actor> shards, supervisor_actor supervisor,
                                coordinator_actor coordinator) {
  worker_config w;
  w.index = static_cast<std::uint32_t>(index);
  w.net = job.net;
  w.model_size = job.layout.size();
  w.batch_size = opts.batch_size;
  w.log_every = opts.log_every;
  w.batch_seed = worker_batch_seed(opts.seed, index);
  w.layouts = partition(job.layout, shards.size(), opts.placement);
  w.train = job.data.train;
  w.stream = job.data.stream;
  w.shards = std::move(shards);
  w.supervisor = std::move(supervisor);
  w.coordinator = std::move(coordinator);
  w.mode = opts.mode;
  w.pipeline = opts.pipeline;
  w.wire = opts.wire;
  w.schedule = schedule_for(opts);
  w.last_step = opts.last_step;
  w.gradients_per_step = gradients_per_worker(replicas_for(opts), opts.worker_hosts.size());
  if (const auto& rows = job.layout.row_variable()) {
    w.row_bounds = row_boundaries(rows->rows, w.shards.size());
    w.row_cols = rows->cols;
  }
  w.log = node_logger(opts, role_kind::worker, index);
  return w;
}

}  // namespace downpour
