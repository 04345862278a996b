#include "runtime/node/chief_helpers.hpp"

#include "actors/checkpoint_saver.hpp"
#include "actors/evaluator.hpp"
#include "actors/sync_coordinator.hpp"
#include "runtime/node/actor_configs.hpp"

namespace downpour {

chief_helpers spawn_helpers(caf::actor_system& sys, const options& opts, const model_layout& layout,
                            const std::vector<shard_actor>& shards, std::int64_t step) {
  chief_helpers h;
  h.coordinator = spawn_sync_coordinator(sys, coordinator_config_for(opts, shards));
  h.saver = spawn_checkpoint_saver(sys, saver_config_for(opts, layout, shards, step));
  return h;
}

evaluator_actor spawn_evaluator_for(caf::actor_system& sys, const options& opts,
                                    const job_model& job, const std::vector<shard_actor>& shards,
                                    const supervisor_actor& supervisor, std::int64_t step) {
  if (opts.eval_every <= 0 || job.data.validation->size() == 0) return {};
  return spawn_evaluator(sys, evaluator_config_for(opts, job, shards, supervisor), step);
}

void watch_helpers(job_watch& watch, const chief_helpers& h) {
  watch.watch(h.coordinator);
  watch.watch(h.saver);
  watch.watch(h.evaluator);
}

std::vector<named_actor> started_here(const supervisor_actor& supervisor, const chief_helpers& h,
                                      const std::vector<worker_actor>& workers) {
  std::vector<named_actor> all{{"the stop supervisor", caf::actor_cast<caf::actor>(supervisor)},
                               {"the sync coordinator", caf::actor_cast<caf::actor>(h.coordinator)},
                               {"the checkpoint saver", caf::actor_cast<caf::actor>(h.saver)},
                               {"the evaluator", caf::actor_cast<caf::actor>(h.evaluator)}};
  for (std::size_t i = 0; i < workers.size(); ++i)
    all.push_back(
        {"a local worker (" + std::to_string(i + 1) + " of " + std::to_string(workers.size()) + ")",
         caf::actor_cast<caf::actor>(workers[i])});
  return all;
}

void stop_helpers(caf::scoped_actor& self, const chief_helpers& h) {
  for (auto a : {caf::actor_cast<caf::actor>(h.coordinator), caf::actor_cast<caf::actor>(h.saver),
                 caf::actor_cast<caf::actor>(h.evaluator)})
    if (a) self->send_exit(a, caf::exit_reason::user_shutdown);
}

}  // namespace downpour
