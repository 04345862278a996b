#include "runtime/node/trainers.hpp"

#include "actors/exchange.hpp"
#include "actors/push_keeper.hpp"
#include "config/durations.hpp"

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

// A shard's refusal is its answer (taken nowhere: the ticket is trained
// again); a lost or silent one keeps the push for the next placement, and so
// does a copy retired after a hang (fenced: the placement was stale).
bool answered_by_shard(const caf::error& err) {
  return err != caf::sec::request_receiver_down && err != caf::sec::request_timeout &&
         err != errc::fenced;
}

// Each kept push to the shard it was for, as placed now, one at a time.
void resend_kept(caf::actor_system& sys, const options& opts, std::size_t task,
                 const push_keeper_actor& keeper, const std::vector<shard_actor>& shards) {
  caf::scoped_actor self{sys};
  const auto timeout = timespan_of(opts.connect_timeout_s);
  std::vector<kept_push> kept;
  self->request(keeper, timeout, keep_atom_v)
      .receive([&](std::vector<kept_push>& x) { kept = std::move(x); }, [](caf::error&) {});
  if (kept.empty()) return;
  std::size_t taken = 0, refused = 0, again = 0;
  for (auto& p : kept) {
    if (p.shard >= shards.size()) continue;
    self->request(shards[p.shard], timeout, resend_atom_v, p.push)
        .receive([&](std::int64_t) { ++taken; },
                 [&](caf::error& err) {
                   if (answered_by_shard(err)) return void(++refused);
                   ++again;
                   self->send(keeper, keep_atom_v, std::move(p));
                 });
  }
  node_logger(opts, role_kind::worker, task)
      .info("sent " + std::to_string(kept.size()) + " kept push(es) again: " +
            std::to_string(taken) + " taken, " + std::to_string(refused) +
            " taken nowhere before the failover, " + std::to_string(again) + " kept still");
}

}  // namespace

std::vector<worker_actor> start_trainers(caf::actor_system& sys, const options& opts,
                                         std::size_t task, const job_model& job,
                                         const std::vector<shard_actor>& shards,
                                         const supervisor_actor& supervisor,
                                         const coordinator_actor& coordinator,
                                         const trainer_keep& keep) {
  if (keep.pushes) resend_kept(sys, opts, task, keep.pushes, shards);
  const auto links = links_for(sys, opts, task, job, shards);
  std::vector<worker_actor> trainers;
  for (std::size_t t = 0; t < opts.trainers; ++t) {
    auto cfg = worker_config_for(opts, trainer_seat{task, t}, job, links, supervisor, coordinator);
    cfg.keeper = keep.pushes;
    if (t < keep.batches.size()) cfg.batches = keep.batches[t];
    trainers.push_back(spawn_worker(sys, std::move(cfg)));
    caf::anon_send(trainers.back(), start_atom_v);
  }
  return trainers;
}

node_keeper::node_keeper(caf::actor_system& sys, const options& opts, const job_model& job) {
  if (opts.ps_replicas <= 1 || opts.role != role_kind::worker) return;
  keep.pushes = spawn_push_keeper(sys);
  if (job.data.stream) return;  // a streamed trainer reads on from where the shards say
  for (std::size_t t = 0; t < opts.trainers; ++t)
    keep.batches.push_back(std::make_shared<seat_batches>(
        job.data.train, opts.batch_size,
        worker_batch_seed(opts.seed, opts.task * opts.trainers + t)));
}

node_keeper::~node_keeper() {
  if (keep.pushes) caf::anon_send_exit(keep.pushes, caf::exit_reason::user_shutdown);
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
