#include "runtime/node/reference_trainer.hpp"

#include <chrono>
#include <ostream>

#include "actors/log.hpp"
#include "data/batcher.hpp"
#include "model/init.hpp"
#include "model/mlp.hpp"

namespace downpour {

reference_result run_reference(const options& opts, const mnist_data& data, std::ostream& log) {
  const model_shape shape = shape_for(opts, data);
  auto params = initial_parameters(shape, opts.seed);
  auto ema = params;  // shadows start at the variables' initial values
  return run_reference(opts, data, log, reference_start{0, std::move(params), std::move(ema)});
}

reference_result run_reference(const options& opts, const mnist_data& data, std::ostream& log,
                               reference_start start) {
  const model_shape shape = shape_for(opts, data);
  const lr_schedule schedule = schedule_for(opts);
  reference_result r;
  r.params = std::move(start.params);
  r.ema = std::move(start.ema);
  std::vector<float> grad(shape.size());
  mlp_workspace ws(shape, opts.batch_size, opts.l2);
  batcher batches(nullptr, data.train, opts.batch_size, worker_batch_seed(opts.seed, 0));
  const auto began = std::chrono::steady_clock::now();
  float loss = 0.0f;
  for (std::int64_t step = start.step; step < opts.last_step; ++step) {
    loss = ws.loss_and_gradient(r.params.data(), batches.next_batch(), grad.data());
    apply_sgd(r.params.data(), grad.data(), grad.size(), learning_rate_at(schedule, step));
    update_ema(r.ema.data(), r.params.data(), r.ema.size(), ema_decay_at(opts.ema_decay, step));
    if ((step + 1) % opts.log_every == 0)
      log << step_log_line(step + 1, step + 1 - start.step, loss) << '\n';
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  r.summary.global_step = opts.last_step;
  r.summary.loss = loss;
  r.summary.test_accuracy = evaluate(shape, r.params.data(), data.test).overall;
  r.summary.ema_test_accuracy = evaluate(shape, r.ema.data(), data.test).overall;
  r.summary.wall_s = wall;
  const auto steps = static_cast<double>(opts.last_step - start.step);
  r.summary.steps_per_s = wall > 0 ? steps / wall : 0.0;
  return r;
}

}  // namespace downpour
