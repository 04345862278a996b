#include "runtime/node/trainers.hpp"

#include "actors/exchange.hpp"

namespace downpour {
namespace {

// What the node's trainers talk to: the shards themselves, or an exchange
// in front of each. An exchange ends with its shard, or once no trainer
// holds it any more.
std::vector<shard_link> links_for(caf::actor_system& sys, const options& opts, std::size_t task,
                                  const job_model& job, const std::vector<shard_actor>& shards) {
  if (opts.trainers == 1) return std::vector<shard_link>(shards.begin(), shards.end());
  std::vector<shard_link> links;
  for (std::size_t k = 0; k < shards.size(); ++k) {
    exchange_config c;
    c.shard = shards[k];
    c.trainers = opts.trainers;
    c.rows = job.layout.rows();
    c.shard_index = k;
    c.log = node_logger(opts, role_kind::worker, task);
    links.push_back(spawn_exchange(sys, std::move(c)));
  }
  return links;
}

}  // namespace

std::vector<worker_actor> start_trainers(caf::actor_system& sys, const options& opts,
                                         std::size_t task, const job_model& job,
                                         const std::vector<shard_actor>& shards,
                                         const supervisor_actor& supervisor,
                                         const coordinator_actor& coordinator) {
  const auto links = links_for(sys, opts, task, job, shards);
  std::vector<worker_actor> trainers;
  for (std::size_t t = 0; t < opts.trainers; ++t) {
    trainers.push_back(spawn_worker(
        sys, worker_config_for(opts, trainer_seat{task, t}, job, links, supervisor, coordinator)));
    caf::anon_send(trainers.back(), start_atom_v);
  }
  return trainers;
}

// A trainer that failed (an exception) ends its node's others with its
// reason, so the node ends as a whole. Every other end (the job stopped or
// over, a lost peer) reaches each trainer by itself: one ended early would
// lose the push it has in flight.
caf::error wait_for_trainers(caf::actor_system& sys, const std::vector<worker_actor>& trainers) {
  caf::scoped_actor self{sys};
  for (const auto& t : trainers) self->monitor(t);
  caf::error first;
  for (std::size_t i = 0; i < trainers.size(); ++i)
    self->receive([&](caf::down_msg& dm) {
      const bool plain = !dm.reason || dm.reason == caf::exit_reason::normal ||
                         dm.reason == caf::exit_reason::user_shutdown;
      if (plain || first) return;
      first = dm.reason;
      if (first != errc::failed) return;
      for (const auto& t : trainers) self->send_exit(t, first);
    });
  return first;
}

}  // namespace downpour
