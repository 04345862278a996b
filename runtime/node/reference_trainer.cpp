#include "runtime/node/reference_trainer.hpp"

#include <algorithm>
#include <chrono>
#include <ostream>

#include "reporting/log.hpp"
#include "config/durations.hpp"
#include "data/batcher.hpp"
#include "model/dense_rules.hpp"
#include "model/init.hpp"
#include "model/update.hpp"

namespace downpour {
namespace {

// As a shard does it: the SGD kernel over all, then each variable with a
// rule of its own by its rule from the values it had.
void update_params(dense_rules& rules, std::vector<float>& params, const std::vector<float>& grad,
                   update_moment at) {
  std::vector<float> before;
  for (const auto& seg : rules.segments())
    before.insert(before.end(), params.begin() + seg.local, params.begin() + seg.local + seg.size);
  sgd_into(params.data(), params.data(), grad.data(), grad.size(), at.learning_rate);
  std::size_t from = 0;
  for (std::size_t s = 0; s < rules.segments().size(); ++s) {
    const auto& seg = rules.segments()[s];
    std::copy_n(before.data() + from, seg.size, params.data() + seg.local);
    rules.apply(s, params.data() + seg.local, grad.data() + seg.local, at);
    from += seg.size;
  }
}

}  // namespace

reference_result run_reference(const options& opts, const job_model& job, std::ostream& log) {
  auto params = initial_parameters(job.layout, opts.seed);
  auto ema = params;  // shadows start at the variables' initial values
  return run_reference(opts, job, log, reference_start{0, std::move(params), std::move(ema)});
}

reference_result run_reference(const options& opts, const job_model& job, std::ostream& log,
                               reference_start start) {
  const lr_schedule schedule = schedule_for(opts);
  reference_result r;
  r.params = std::move(start.params);
  r.ema = std::move(start.ema);
  std::vector<float> grad(job.layout.size());
  dense_rules rules(job.layout.variables(), {0, job.layout.size()});
  auto ws = job.net->workspace(opts.batch_size);
  batcher batches(job.data.train, opts.batch_size, worker_batch_seed(opts.seed, 0));
  const auto began = std::chrono::steady_clock::now();
  float loss = 0.0f;
  for (std::int64_t step = start.step; step < opts.last_step; ++step) {
    loss = ws->loss_and_gradient(r.params.data(), batches.next_batch(), grad.data());
    update_params(rules, r.params, grad, {learning_rate_at(schedule, step), step});
    update_ema(r.ema.data(), r.params.data(), r.ema.size(), ema_decay_at(opts.ema_decay, step));
    if ((step + 1) % opts.log_every == 0)
      log << step_log_line(step + 1, step + 1 - start.step, loss) << '\n';
  }
  const double wall = seconds_since(began);
  r.summary.global_step = opts.last_step;
  r.summary.loss = loss;
  add_test_figures(r.summary, evaluate(*job.net, r.params.data(), *job.data.test),
                   evaluate(*job.net, r.ema.data(), *job.data.test));
  r.summary.wall_s = wall;
  const auto steps = static_cast<double>(opts.last_step - start.step);
  r.summary.steps_per_s = wall > 0 ? steps / wall : 0.0;
  return r;
}

}  // namespace downpour
