#include "runtime/node.hpp"

#include <iostream>
#include <thread>

#include "actors/messages.hpp"
#include "actors/parameter_shard.hpp"
#include "actors/worker.hpp"
#include "caf/io/all.hpp"
#include "caf/openssl/all.hpp"
#include "runtime/chief.hpp"
#include "runtime/cluster_config.hpp"
#include "runtime/connect.hpp"
#include "runtime/placement.hpp"
#include "runtime/sync_rule.hpp"
#include "runtime/tls_guard.hpp"

namespace downpour {

namespace {

caf::timespan span(double seconds) {
  return std::chrono::duration_cast<caf::timespan>(std::chrono::duration<double>(seconds));
}

// Heartbeats detect hung peers; the application identifier keeps clusters
// and versions apart (CAF refuses a handshake when they differ); mutual TLS
// authenticates every peer against the cluster's CA.
void apply_network_settings(caf::actor_system_config& cfg, const options& opts) {
  if (opts.heartbeat_interval_s > 0) {
    cfg.set("middleman.heartbeat-interval", span(opts.heartbeat_interval_s));
    cfg.set("middleman.connection-timeout", span(opts.node_timeout_s));
  }
  cfg.set("middleman.app-identifiers",
          std::vector<std::string>{"downpour-" DOWNPOUR_VERSION "-" + opts.cluster_name});
  if (!opts.tls()) return;
  cfg.load<caf::openssl::manager>();
  cfg.openssl_cafile = opts.tls_ca;
  cfg.openssl_certificate = opts.tls_cert;
  cfg.openssl_key = opts.tls_key;
  cfg.openssl_passphrase = opts.tls_passphrase;
  cfg.set("middleman.max-consecutive-reads", tls_consecutive_reads);
}

}  // namespace

node_config::node_config(const options& opts) {
  add_message_types<caf::id_block::downpour>();
  add_error_category(caf::atom("downpour"),
                     [](std::uint8_t code, caf::atom_value, const caf::message& ctx) {
                       if (ctx.match_elements<std::string>()) return ctx.get_as<std::string>(0);
                       return to_string(static_cast<errc>(code));
                     });
  load<caf::io::middleman>();
  std::size_t threads = opts.scheduler_threads;
  if (threads == 0)
    threads = std::max<std::size_t>(2, std::min<std::size_t>(4, std::thread::hardware_concurrency()));
  set("scheduler.policy",
      opts.scheduler_policy == "stealing" ? caf::atom("stealing") : caf::atom("sharing"));
  set("scheduler.max-threads", threads);
  set("middleman.workers", std::size_t{0});
  set("logger.console", caf::atom("none"));
  apply_network_settings(*this, opts);
}

static shard_config shard_config_for(const options& opts, std::size_t index) {
  return shard_config{static_cast<std::uint32_t>(index), cluster_fingerprint(opts),
                      schedule_for(opts), opts.ema_decay, opts.last_step, opts.mode,
                      replicas_for(opts)};
}

static worker_config worker_config_for(const options& opts, std::size_t index,
                                std::shared_ptr<const mnist_data> data,
                                std::vector<shard_actor> shards, supervisor_actor supervisor,
                                coordinator_actor coordinator) {
  worker_config w;
  w.index = static_cast<std::uint32_t>(index);
  w.shape = shape_for(opts, *data);
  w.batch_size = opts.batch_size;
  w.l2 = opts.l2;
  w.log_every = opts.log_every;
  w.batch_seed = worker_batch_seed(opts.seed, index);
  w.layouts = partition(w.shape, shards.size(), opts.placement);
  w.data = std::move(data);
  w.shards = std::move(shards);
  w.supervisor = std::move(supervisor);
  w.coordinator = std::move(coordinator);
  w.mode = opts.mode;
  w.last_step = opts.last_step;
  w.gradients_per_step = gradients_per_worker(replicas_for(opts), opts.worker_hosts.size());
  return w;
}

void report_final(const options& opts, const run_summary& summary) {
  std::cout << final_line(summary) << std::endl;
  write_file_atomically(opts.checkpoint_dir + "/summary.json", summary_json(summary));
}

namespace {

caf::expected<job_result> run_local_inproc(const options& opts) {
  auto data = load_mnist(opts.data_dir, opts.validation_size);
  node_config cfg{opts};
  caf::actor_system sys{cfg};
  std::vector<shard_actor> shards;
  for (std::size_t k = 0; k < opts.ps_hosts.size(); ++k)
    shards.push_back(spawn_parameter_shard(sys, shard_config_for(opts, k)));
  auto start = [&](supervisor_actor supervisor, coordinator_actor coordinator) -> caf::error {
    for (std::size_t w = 0; w < opts.worker_hosts.size(); ++w) {
      auto worker =
          spawn_worker(sys, worker_config_for(opts, w, data, shards, supervisor, coordinator));
      caf::anon_send(worker, start_atom_v);
    }
    return caf::none;
  };
  return run_chief(sys, opts, data, shards, start);
}

// One actor system per node, each in its own thread, talking over loopback:
// the same code as separate processes, so it exercises the real wire path.
caf::expected<job_result> run_local_tcp(const options& opts) {
  options base = opts;
  auto ports = pick_free_ports(opts.ps_hosts.size() + opts.worker_hosts.size());
  std::size_t next = 0;
  for (auto& h : base.ps_hosts) h = {"127.0.0.1", ports[next++]};
  for (auto& h : base.worker_hosts) h = {"127.0.0.1", ports[next++]};
  std::vector<std::thread> threads;
  std::vector<caf::error> failures(ports.size());
  caf::expected<job_result> chief{caf::make_error(errc::stopped)};
  for (std::size_t k = 0; k < base.ps_hosts.size(); ++k) {
    options o = base;
    o.role = role_kind::ps;
    o.task = k;
    threads.emplace_back([o, &failures, k] {
      auto r = run_ps_node(o);
      if (!r) failures[k] = r.error();
    });
  }
  for (std::size_t w = 0; w < base.worker_hosts.size(); ++w) {
    options o = base;
    o.role = role_kind::worker;
    o.task = w;
    std::size_t slot = base.ps_hosts.size() + w;
    threads.emplace_back([o, &failures, &chief, slot, w] {
      auto r = run_worker_node(o);
      if (!r) failures[slot] = r.error();
      else if (w == 0) chief = std::move(r);
    });
  }
  for (auto& t : threads) t.join();
  for (auto& f : failures)
    if (f) return f;
  return chief;
}

caf::expected<std::vector<shard_actor>> connect_shards(caf::actor_system& sys,
                                                      const options& opts) {
  std::vector<shard_actor> shards;
  for (std::size_t k = 0; k < opts.ps_hosts.size(); ++k) {
    auto h = connect_to<shard_actor>(sys, opts, opts.ps_hosts[k], "ps " + std::to_string(k));
    if (!h) return h.error();
    shards.push_back(*h);
  }
  return shards;
}

// Waits until the actor is gone; its exit reason is the node's result.
caf::error wait_for(caf::actor_system& sys, const caf::actor& a) {
  caf::scoped_actor self{sys};
  self->monitor(a);
  caf::error reason;
  self->receive([&](caf::down_msg& dm) { reason = dm.reason; });
  if (reason == caf::exit_reason::normal || reason == caf::exit_reason::user_shutdown)
    return caf::none;
  return reason;
}

// The chief checks our config and tells us where its coordinator is.
caf::expected<coordinator_actor> greet_chief(caf::actor_system& sys, const options& opts,
                                             const supervisor_actor& supervisor) {
  caf::scoped_actor self{sys};
  caf::expected<coordinator_actor> result{caf::make_error(errc::stopped)};
  self->request(supervisor, std::chrono::duration_cast<caf::timespan>(
                                std::chrono::duration<double>(opts.connect_timeout_s)),
                hello_atom_v, cluster_fingerprint(opts))
      .receive([&](std::int64_t, coordinator_actor& c) { result = std::move(c); },
               [&](caf::error& err) { result = std::move(err); });
  return result;
}

caf::expected<job_result> run_non_chief(caf::actor_system& sys, const options& opts,
                                        std::shared_ptr<const mnist_data> data,
                                        std::vector<shard_actor> shards) {
  auto supervisor =
      connect_to<supervisor_actor>(sys, opts, opts.worker_hosts[0], "the chief (worker 0)");
  if (!supervisor) return supervisor.error();
  if (auto err = check_peers(sys, opts, shards)) return err;
  auto coordinator = greet_chief(sys, opts, *supervisor);
  if (!coordinator) return coordinator.error();
  auto worker = spawn_worker(
      sys, worker_config_for(opts, opts.task, data, shards, *supervisor, *coordinator));
  caf::anon_send(worker, start_atom_v);
  if (auto err = wait_for(sys, caf::actor_cast<caf::actor>(worker))) return err;
  return job_result{};
}

}  // namespace

caf::expected<job_result> run_local(const options& opts) {
  if (opts.transport == transport_kind::tcp) return run_local_tcp(opts);
  return run_local_inproc(opts);
}

caf::expected<std::int64_t> run_ps_node(const options& opts, const listening_callback& on_listening) {
  node_config cfg{opts};
  caf::actor_system sys{cfg};
  auto shard = spawn_parameter_shard(sys, shard_config_for(opts, opts.task));
  auto port = publish_on(sys, opts, shard, opts.ps_hosts[opts.task], "ps " + std::to_string(opts.task));
  if (!port) {
    caf::anon_send_exit(shard, caf::exit_reason::user_shutdown);
    return port.error();
  }
  if (on_listening) on_listening(*port);
  if (auto err = wait_for(sys, caf::actor_cast<caf::actor>(shard))) return err;
  return opts.last_step;
}

caf::expected<job_result> run_worker_node(const options& opts,
                                          const listening_callback& on_listening) {
  auto data = load_mnist(opts.data_dir, opts.validation_size);
  node_config cfg{opts};
  caf::actor_system sys{cfg};
  auto shards = connect_shards(sys, opts);
  if (!shards) return shards.error();
  if (opts.task != 0) return run_non_chief(sys, opts, data, *shards);
  auto start = [&](supervisor_actor supervisor, coordinator_actor coordinator) -> caf::error {
    auto port = publish_on(sys, opts, supervisor, opts.worker_hosts[0], "the chief (worker 0)");
    if (!port) return port.error();
    if (on_listening) on_listening(*port);
    auto worker =
        spawn_worker(sys, worker_config_for(opts, 0, data, *shards, supervisor, coordinator));
    caf::anon_send(worker, start_atom_v);
    return caf::none;
  };
  return run_chief(sys, opts, data, *shards, start);
}

}  // namespace downpour
