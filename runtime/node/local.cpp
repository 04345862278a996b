// --role=local: the whole cluster in this process.
#include <thread>

#include "runtime/net/connect.hpp"
#include "runtime/net/ports.hpp"
#include "runtime/node/actor_configs.hpp"
#include "runtime/node/chief.hpp"
#include "runtime/node/finished.hpp"
#include "runtime/node/node.hpp"
#include "runtime/node/trainers.hpp"

namespace downpour {

namespace {

// --ps-replicas R: R - 1 backups of each shard, which take its state and
// its pushes (actors/shard_replicas.cpp). In one process nothing fails on
// its own: they cost what replication costs, for the benches to measure.
std::vector<shard_actor> spawn_backups(caf::actor_system& sys, const options& opts,
                                       const model_layout& layout,
                                       const std::vector<shard_actor>& shards) {
  std::vector<shard_actor> all;
  caf::scoped_actor self{sys};
  for (std::size_t k = 0; k < shards.size(); ++k) {
    replica_set primary;
    for (std::size_t r = 1; r < opts.ps_replicas; ++r) {
      auto backup = spawn_parameter_shard(sys, shard_config_for(opts, layout, k));
      self->send(backup, replica_atom_v,
                 replica_set{{}, caf::actor_cast<caf::actor>(shards[k])});
      primary.backups.push_back(caf::actor_cast<caf::actor>(backup));
      all.push_back(std::move(backup));
    }
    if (!primary.backups.empty()) self->send(shards[k], replica_atom_v, std::move(primary));
  }
  return all;
}

caf::expected<job_result> run_local_inproc(const options& opts, const job_model& job,
                                           stop_switch* stops) {
  if (auto done = finished_before(opts)) return finished_result(std::move(*done));
  node_config cfg{opts, job.layout};
  caf::actor_system sys{cfg};
  std::vector<shard_actor> shards;
  for (std::size_t k = 0; k < opts.ps_hosts.size(); ++k)
    shards.push_back(spawn_parameter_shard(sys, shard_config_for(opts, job.layout, k)));
  const auto backups = spawn_backups(sys, opts, job.layout, shards);
  auto start =
      [&](supervisor_actor supervisor, coordinator_actor coordinator,
          const std::vector<shard_actor>& current) -> caf::expected<std::vector<worker_actor>> {
    std::vector<worker_actor> workers;
    for (std::size_t w = 0; w < opts.worker_hosts.size(); ++w)
      for (auto& t : start_trainers(sys, opts, w, job, current, supervisor, coordinator, trainer_keep{}))
        workers.push_back(std::move(t));
    return workers;
  };
  auto result = run_chief(sys, opts, job, shards, start, stops);
  caf::scoped_actor self{sys};
  for (const auto& b : backups) self->send(b, stop_atom_v);  // the chief stops only primaries
  return result;
}

// One actor system per node, each in its own thread, talking over loopback:
// the same code as separate processes, so it exercises the real wire path.
// A stop goes to the chief's node.
caf::expected<job_result> run_local_tcp(const options& opts, const job_model& job,
                                        stop_switch* stops) {
  options base = opts;
  const port_reservation ports(opts.ps_hosts.size() + opts.worker_hosts.size());
  std::size_t next = 0;
  // On loopback at the host lists' ports (so `status` finds the chief where
  // --worker-hosts says); port 0: a free one.
  auto on_loopback = [&](host_port& h) {
    const auto spare = ports[next++];
    h = {"127.0.0.1", h.port != 0 ? h.port : spare};
  };
  for (auto& h : base.ps_hosts) on_loopback(h);
  for (auto& h : base.worker_hosts) on_loopback(h);
  std::vector<std::thread> threads;
  std::vector<caf::error> failures(ports.size());
  caf::expected<job_result> chief{caf::make_error(errc::stopped)};
  for (std::size_t k = 0; k < base.ps_hosts.size(); ++k) {
    options o = base;
    o.role = role_kind::ps;
    o.task = k;
    o.metrics_port = 0;  // the chief's endpoint covers the whole local job
    threads.emplace_back([o, &job, &failures, k] {
      auto r = run_ps_node(o, job.layout);
      if (!r) failures[k] = r.error();
    });
  }
  for (std::size_t w = 0; w < base.worker_hosts.size(); ++w) {
    options o = base;
    o.role = role_kind::worker;
    o.task = w;
    if (w != 0) o.metrics_port = 0;  // the chief's endpoint covers the whole local job
    std::size_t slot = base.ps_hosts.size() + w;
    node_hooks hooks;
    if (w == 0) hooks.stops = stops;
    threads.emplace_back([o, hooks, &job, &failures, &chief, slot, w] {
      // Thrown here, an error would end the process (std::terminate).
      try {
        auto r = run_worker_node(o, job, hooks);
        if (!r)
          failures[slot] = r.error();
        else if (w == 0)
          chief = std::move(r);
      } catch (const std::exception& e) {
        failures[slot] = make_node_error(errc::failed, e.what());
      }
    });
  }
  for (auto& t : threads) t.join();
  if (chief && chief->summary.status == job_status::stopped) return chief;
  // The chief's reason first: the others only follow from it.
  if (auto& f = failures[base.ps_hosts.size()]) return f;
  for (auto& f : failures)
    if (f) return f;
  return chief;
}

}  // namespace

caf::expected<job_result> run_local(const options& opts, const job_model& job,
                                    const node_hooks& hooks) {
  if (opts.transport == transport_kind::tcp) return run_local_tcp(opts, job, hooks.stops);
  return run_local_inproc(opts, job, hooks.stops);
}

}  // namespace downpour
