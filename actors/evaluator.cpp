#include "actors/evaluator.hpp"

#include <algorithm>

#include "protocol/failure.hpp"
#include "protocol/model_snapshot.hpp"

namespace downpour {
namespace {

struct evaluator_state {
  evaluator_config cfg;
  static inline const char* name = "evaluator";
};

using evaluator_pointer = evaluator_actor::stateful_pointer<evaluator_state>;

std::int64_t next_multiple(std::int64_t step, std::int64_t every) {
  return (step / every + 1) * every;
}

void report(evaluator_pointer self, std::int64_t step, const model_snapshot& model) {
  auto& st = self->state;
  const dataset& validation = *st.cfg.validation;
  const auto& net = *st.cfg.net;
  const auto both = evaluate_both(net, model.params.data(), model.ema.data(), model.rows,
                                  st.cfg.rows, validation);
  const double raw = both.raw.overall, ema = both.ema.overall;
  self->send(st.cfg.supervisor, eval_atom_v, step, raw, ema);
}

// A shard already past the step (it raced ahead) skips this evaluation: ask
// where shard 0 stands and aim at the next multiple after it and after the
// step passed (in async mode shard 0 may still be short of that step; aiming
// at it again would ask and fail without end).
void skip_ahead(evaluator_pointer self, std::int64_t passed) {
  self->request(self->state.cfg.shards[0], std::chrono::minutes(1), await_atom_v, std::int64_t{0})
      .then([=](std::int64_t now) { self->send(self, eval_atom_v, std::max(now, passed)); },
            [=](caf::error& err) { self->quit(std::move(err)); });
}

// The next step's snapshot is asked for before this one is evaluated: the
// shards then hold the request while the evaluation runs, and only a shard
// that moves a whole interval within one round trip makes it skip.
void evaluate_at(evaluator_pointer self, std::int64_t step) {
  auto& st = self->state;
  if (step > st.cfg.last_step) return;
  gather_snapshot(self, st.cfg.shards, st.cfg.model_size, step, caf::infinite,
                  [=](caf::expected<model_snapshot> model) {
                    if (model) {
                      evaluate_at(self, next_multiple(step, self->state.cfg.every));
                      report(self, step, *model);
                    } else if (model.error() == errc::step_passed)
                      skip_ahead(self, step);
                    else  // a shard gone or failing would fail every later step at once
                      self->quit(model.error());
                  });
}

evaluator_actor::behavior_type evaluator(evaluator_pointer self, evaluator_config cfg,
                                         std::int64_t start_step) {
  end_on_exception(self);
  auto& st = self->state;
  st.cfg = std::move(cfg);
  self->send(self, eval_atom_v, start_step);
  return {
    [=](eval_atom, std::int64_t after) {
      evaluate_at(self, next_multiple(after, self->state.cfg.every));
    },
  };
}

}  // namespace

template <caf::spawn_options Os>
evaluator_actor spawn_evaluator(caf::actor_system& sys, evaluator_config cfg,
                                std::int64_t start_step) {
  return sys.spawn<Os>(evaluator, std::move(cfg), start_step);
}

template evaluator_actor spawn_evaluator<caf::detached>(caf::actor_system&, evaluator_config,
                                                        std::int64_t);
template evaluator_actor spawn_evaluator<caf::no_spawn_options>(caf::actor_system&,
                                                                evaluator_config, std::int64_t);

}  // namespace downpour
