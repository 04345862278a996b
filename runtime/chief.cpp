#include "runtime/chief.hpp"

#include <chrono>

#include "actors/stop_supervisor.hpp"
#include "actors/sync_coordinator.hpp"
#include "model/init.hpp"
#include "model/mlp.hpp"
#include "runtime/cluster_config.hpp"
#include "runtime/placement.hpp"

namespace downpour {
namespace {

caf::timespan seconds(double s) {
  return std::chrono::duration_cast<caf::timespan>(std::chrono::duration<double>(s));
}

shard_init make_init(const model_shape& shape, const shard_layout& layout,
                     const std::vector<float>& params) {
  shard_init init;
  init.input = shape.input;
  init.hidden = shape.hidden;
  init.classes = shape.classes;
  for (const auto& r : layout.ranges) {
    init.ranges.push_back(r.offset);
    init.ranges.push_back(r.size);
  }
  init.params.values = gather(layout, params.data());
  init.ema.values = init.params.values;  // shadows start at the initial values
  return init;
}

// Initialises every shard (a shard that already holds state keeps it) and
// returns the global step they stand at, which must agree.
caf::expected<std::int64_t> init_shards(caf::scoped_actor& self, const options& opts,
                                        const model_shape& shape,
                                        const std::vector<shard_actor>& shards) {
  auto layouts = partition(shape, shards.size(), opts.placement);
  auto params = initial_parameters(shape, opts.seed);
  std::int64_t step = -1;
  caf::error failure;
  for (std::size_t k = 0; k < shards.size() && !failure; ++k) {
    self->request(shards[k], seconds(opts.connect_timeout_s), init_atom_v,
                  make_init(shape, layouts[k], params))
        .receive(
            [&](std::int64_t s) {
              if (step >= 0 && s != step)
                failure = caf::make_error(errc::config_mismatch,
                                          "shards stand at different steps (" +
                                              std::to_string(step) + " and " +
                                              std::to_string(s) + ")");
              step = s;
            },
            [&](caf::error& err) { failure = std::move(err); });
  }
  if (failure) return failure;
  return step;
}

// Pulls every shard's parameters and shadows into full flat buffers.
caf::expected<job_result> collect(caf::scoped_actor& self, const model_shape& shape,
                                  const std::vector<shard_actor>& shards) {
  job_result r;
  r.params.resize(shape.size());
  r.ema.resize(shape.size());
  caf::error failure;
  for (std::size_t k = 0; k < shards.size() && !failure; ++k) {
    self->request(shards[k], std::chrono::seconds(60), snapshot_atom_v)
        .receive(
            [&](shard_snapshot& snap) {
              shard_layout layout;
              for (std::size_t i = 0; i + 1 < snap.ranges.size(); i += 2)
                layout.ranges.push_back({snap.ranges[i], snap.ranges[i + 1]});
              scatter(layout, snap.params.values.data(), r.params.data());
              scatter(layout, snap.ema.values.data(), r.ema.data());
              r.summary.global_step = snap.step;
              r.dropped += snap.dropped;
              r.rejected += snap.rejected;
            },
            [&](caf::error& err) { failure = std::move(err); });
  }
  if (failure) return failure;
  return r;
}

progress_config progress_for(const options& opts, std::int64_t start_step) {
  progress_config p;
  p.metrics_path = opts.checkpoint_dir + "/metrics.csv";
  p.schedule = schedule_for(opts);
  p.start_step = start_step;
  p.last_step = opts.last_step;
  p.quiet = opts.quiet;
  return p;
}

}  // namespace

caf::error check_peers(caf::actor_system& sys, const options& opts,
                       const std::vector<shard_actor>& shards) {
  caf::scoped_actor self{sys};
  caf::error failure;
  auto fp = cluster_fingerprint(opts);
  for (std::size_t k = 0; k < shards.size() && !failure; ++k)
    self->request(shards[k], seconds(opts.connect_timeout_s), hello_atom_v, fp)
        .receive([](std::int64_t) {}, [&](caf::error& err) { failure = std::move(err); });
  return failure;
}

caf::expected<job_result> run_chief(caf::actor_system& sys, const options& opts,
                                    std::shared_ptr<const mnist_data> data,
                                    std::vector<shard_actor> shards,
                                    const start_workers_fn& start_workers) {
  const model_shape shape = shape_for(opts, *data);
  if (auto err = check_peers(sys, opts, shards)) return err;
  caf::scoped_actor self{sys};
  auto start_step = init_shards(self, opts, shape, shards);
  if (!start_step) return start_step.error();
  auto clock_start = std::chrono::steady_clock::now();
  auto coordinator = spawn_sync_coordinator(
      sys, coordinator_config{opts.mode, opts.worker_hosts.size(), replicas_for(opts),
                              opts.staleness, shards});
  supervisor_config scfg{cluster_fingerprint(opts), *start_step, opts.last_step, shards,
                         progress_for(opts, *start_step), opts.mode, coordinator};
  auto supervisor = spawn_stop_supervisor(sys, std::move(scfg));
  auto shut_down = [&] {
    for (auto& s : shards) self->send(s, stop_atom_v);
    caf::anon_send_exit(supervisor, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(coordinator, caf::exit_reason::user_shutdown);
  };
  if (auto err = start_workers(supervisor, coordinator)) {
    shut_down();
    return err;
  }
  caf::expected<std::int64_t> final_step{caf::make_error(errc::stopped)};
  float last_loss = 0.0f;
  self->request(supervisor, caf::infinite, end_atom_v)
      .receive([&](std::int64_t s, float loss) {
                 final_step = s;
                 last_loss = loss;
               },
               [&](caf::error& err) { final_step = std::move(err); });
  auto result = final_step ? collect(self, shape, shards)
                           : caf::expected<job_result>{final_step.error()};
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - clock_start).count();
  shut_down();
  if (!result) return result;
  auto& sum = result->summary;
  sum.loss = last_loss;
  sum.wall_s = wall;
  sum.steps_per_s = wall > 0 ? static_cast<double>(sum.global_step - *start_step) / wall : 0.0;
  sum.test_accuracy = evaluate(shape, result->params.data(), data->test).overall;
  sum.ema_test_accuracy = evaluate(shape, result->ema.data(), data->test).overall;
  return result;
}

}  // namespace downpour
