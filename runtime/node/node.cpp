#include "runtime/node/node.hpp"

#include <cstdlib>
#include <optional>

#include "protocol/messages.hpp"
#include "protocol/row_pages.hpp"
#include "actors/parameter_shard.hpp"
#include "config/durations.hpp"
#include "actors/worker.hpp"
#include "caf/io/all.hpp"
#include "caf/openssl/all.hpp"
#include "config/version.hpp"
#include "runtime/files/durable_write.hpp"
#include "runtime/net/basp_guard.hpp"
#include "runtime/net/connect.hpp"
#include "runtime/net/metrics_http.hpp"
#include "runtime/net/ports.hpp"
#include "runtime/net/tls_guard.hpp"
#include "runtime/node/actor_configs.hpp"
#include "runtime/node/caf_tuning.hpp"
#include "runtime/node/chief.hpp"
#include "runtime/node/failover.hpp"
#include "runtime/node/finished.hpp"
#include "runtime/node/hello.hpp"
#include "runtime/node/join.hpp"
#include "runtime/node/ps_watch.hpp"
#include "runtime/node/stop_forwarder.hpp"
#include "runtime/node/trainers.hpp"

namespace downpour {

namespace {

// CAF refuses a handshake between nodes whose application identifiers
// differ, so nodes of other clusters and of builds of other commits never
// talk. DOWNPOUR_TEST_HANDSHAKE_VERSION, when set, stands in for the build's
// version here only: the test that proves a node of another version is
// refused starts one with it (test/process/test_operations.cpp).
std::string app_identifier(const options& opts) {
  const char* faked = std::getenv("DOWNPOUR_TEST_HANDSHAKE_VERSION");
  const std::string version = faked && *faked ? faked : build_version();
  return "downpour-" + version + "-" + opts.cluster_name;
}

// The application identifier keeps clusters and versions apart; mutual TLS
// authenticates every peer against the cluster's CA.
void apply_network_settings(caf::actor_system_config& cfg, const options& opts) {
  cfg.set("middleman.app-identifiers", std::vector<std::string>{app_identifier(opts)});
  if (!opts.tls()) return;
  cfg.load<caf::openssl::manager>();
  cfg.openssl_cafile = opts.tls_ca;
  cfg.openssl_certificate = opts.tls_cert;
  cfg.openssl_key = opts.tls_key;
  cfg.openssl_passphrase = opts.tls_passphrase;
  cfg.set("middleman.max-consecutive-reads", tls_consecutive_reads);
}

}  // namespace

node_config::node_config(const options& opts, const model_layout& layout) {
  add_message_types<caf::id_block::downpour>();
  add_error_category(caf::atom("downpour"),
                     [](std::uint8_t code, caf::atom_value, const caf::message& ctx) {
                       if (ctx.match_elements<std::string>()) return ctx.get_as<std::string>(0);
                       return to_string(static_cast<errc>(code));
                     });
  load<caf::io::middleman>();
  tune_caf(*this, opts);
  apply_network_settings(*this, opts);
  guard_basp(basp_payload_bound(layout.size(), row_message_bytes(layout), opts.trainers),
             node_logger(opts, opts.role, opts.task));
}

std::uint64_t row_message_bytes(const model_layout& layout) {
  return row_message_bound(row_tables_of(layout, 0));
}

void report_final(const options& opts, const run_summary& summary, const logger& log) {
  if (summary.status == job_status::completed) log.info(final_line(summary));
  write_durably(opts.checkpoint_dir + "/summary.json", summary_json(summary));
}

namespace {
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

// The chief checks our config and tells us the global step and where its
// coordinator is; while it recovers a lost ps it answers once all is restored.
struct greeting {
  std::int64_t step = 0;
  coordinator_actor coordinator;
};

caf::expected<greeting> greet_chief(caf::actor_system& sys, const options& opts,
                                    const model_layout& layout,
                                    const supervisor_actor& supervisor) {
  caf::scoped_actor self{sys};
  caf::expected<greeting> result{caf::make_error(errc::stopped)};
  const auto timeout = timespan_of(opts.connect_timeout_s);
  auto hello = signed_hello(self, supervisor, opts,
                            hello_msg{job_fingerprint(opts, layout), hello_msg::to_chief,
                                      static_cast<std::uint32_t>(opts.task), {}},
                            timeout);
  if (!hello)
    result = std::move(hello.error());
  else
    self->request(supervisor, timeout, hello_atom_v, *hello)
        .receive([&](std::int64_t step, coordinator_actor& c) { result = greeting{step, c}; },
                 [&](caf::error& err) { result = std::move(err); });
  // A chief that ends while our hello is on the way never answers it (CAF
  // 0.17 fails a request to a lost proxy only by its timeout): name it.
  if (!result && result.error() == caf::sec::request_timeout)
    return make_node_error(errc::unreachable, "cannot reach the chief (worker 0) at " +
                                                  to_string(chief_host(opts)) +
                                                  ": it did not answer our hello within " +
                                                  seconds_text(opts.connect_timeout_s));
  return result;
}

// A worker that lost a shard or the chief (killed, or hung past
// --node-timeout) goes back to joining; anything else ends the node.
bool lost_a_peer(const caf::error& reason) {
  return reason == caf::exit_reason::remote_link_unreachable || reason == errc::recovering;
}

// Fresh handles for the shards that are gone (a ps started again).
caf::expected<std::vector<shard_actor>> reconnect_shards(caf::actor_system& sys,
                                                         const options& opts,
                                                         std::vector<shard_actor> shards) {
  for (std::size_t k = 0; k < shards.size(); ++k) {
    if (!is_gone(sys, shards[k])) continue;
    auto h = connect_live<shard_actor>(sys, opts, opts.ps_hosts[k], "ps " + std::to_string(k));
    if (!h) return h.error();
    shards[k] = std::move(*h);
  }
  return shards;
}

// Joins, trains, and after a lost peer joins again with a fresh worker
// (workers keep no state the shards do not hold, apart from their batch order).
caf::expected<job_result> run_non_chief(caf::actor_system& sys, const options& opts,
                                        const job_model& job, std::vector<shard_actor> shards,
                                        stop_switch* stops) {
  const node_keeper keeper{sys, opts, job};
  for (;;) {
    auto supervisor =
        connect_live<supervisor_actor>(sys, opts, chief_host(opts), "the chief (worker 0)");
    if (!supervisor) return supervisor.error();
    auto hello = greet_chief(sys, opts, job.layout, *supervisor);
    if (!hello) return hello.error();
    if (hello->step >= opts.last_step) return job_result{};  // rejoined as the job ended
    // The chief answers once every shard is back with its settings, which
    // are ours: a ps that differs was refused there and is replaced.
    auto fresh = opts.ps_replicas > 1 ? place_shards(sys, opts, job.layout, *supervisor, shards)
                                      : reconnect_shards(sys, opts, shards);
    if (!fresh && fresh.error() == caf::sec::request_receiver_down) continue;
    if (!fresh) return fresh.error();
    shards = std::move(*fresh);
    if (auto err = check_peers(sys, opts, job.layout, shards,
                               timespan_of(opts.connect_timeout_s))) {
      if (err == caf::sec::request_receiver_down) continue;  // a ps went away: join again
      if (err != errc::config_mismatch) return err;
      node_logger(opts, role_kind::worker, opts.task)
          .warn(describe(err) + "; the chief refuses that ps; joining again");
      continue;
    }
    auto trainers =
        start_trainers(sys, opts, opts.task, job, shards, *supervisor, hello->coordinator,
                       keeper.keep);
    const logger log = node_logger(opts, role_kind::worker, opts.task);
    armed_stop leave{stops, [trainers, log](const std::string& why) {
                       log.info(why + ": this worker leaves the job after the step in hand; the "
                                      "others train on");
                       for (const auto& t : trainers) caf::anon_send(t, stop_atom_v);
                     }};
    auto reason = wait_for_trainers(sys, trainers);
    if (!reason) return job_result{};
    if (!lost_a_peer(reason)) return reason;
    node_logger(opts, role_kind::worker, opts.task)
        .warn("lost a peer (" + describe(reason) + "); joining again");
    if (opts.ps_replicas > 1) continue;  // the chief's hello answer follows its failover
    auto back = reconnect_shards(sys, opts, std::move(shards));  // names a ps that stays away
    if (!back) return back.error();
    shards = std::move(*back);
  }
}

// --join: the chief assigns this node a task index past --worker-hosts; it
// then trains (and joins again after a lost peer) as that task.
caf::expected<job_result> run_joiner(caf::actor_system& sys, const options& opts,
                                     const job_model& job, std::vector<shard_actor> shards,
                                     stop_switch* stops) {
  auto chief = connect_live<supervisor_actor>(sys, opts, chief_host(opts), "the chief");
  if (!chief) return chief.error();
  auto task = join_job(sys, opts, job.layout, *chief);
  if (!task && task.error() == errc::stopped) {  // came as the job ended: nothing to train
    node_logger(opts, role_kind::worker, 0).info("not joining: " + describe(task.error()));
    return job_result{};
  }
  if (!task) return task.error();
  options joined = opts;
  joined.task = *task;
  node_logger(joined, role_kind::worker, joined.task)
      .info("joined the job as worker task " + std::to_string(joined.task) + " (--join " +
            to_string(chief_host(opts)) + ")");
  return run_non_chief(sys, joined, job, std::move(shards), stops);
}

// --ps-replicas 2: this ps keeps the backup of its neighbour's shard j,
// named by the primary to whoever asks (the chief in a failover, workers).
shard_actor spawn_backup(caf::actor_system& sys, const options& opts, const model_layout& layout,
                         std::size_t j) {
  auto cfg = shard_config_for(opts, layout, j);
  cfg.log = node_logger(opts, role_kind::ps, opts.task);  // its lines are this node's
  return spawn_parameter_shard(sys, std::move(cfg));
}

// The shards this node runs end with it (the backup obeys its own node).
struct ended_with_node {
  caf::actor_system& sys;
  std::vector<shard_actor> shards;
  ~ended_with_node() {
    caf::scoped_actor self{sys};
    for (const auto& s : shards) self->send_exit(s, caf::exit_reason::user_shutdown);
  }
};

}  // namespace

caf::expected<std::int64_t> run_ps_node(const options& opts, const model_layout& layout,
                                        const node_hooks& hooks) {
  node_config cfg{opts, layout};
  caf::actor_system sys{cfg};
  return run_ps_node(sys, opts, layout, hooks);
}

caf::expected<std::int64_t> run_ps_node(caf::actor_system& sys, const options& opts,
                                        const model_layout& layout, const node_hooks& hooks) {
  auto cfg = shard_config_for(opts, layout, opts.task);
  std::optional<shard_actor> backup;
  ended_with_node backups{sys, {}};
  if (opts.ps_replicas > 1) {
    const auto j = shard_backed_up_by(opts.task, opts.ps_hosts.size());
    backup = spawn_backup(sys, opts, layout, j);
    backups.shards.push_back(*backup);
    cfg.hosted.emplace(static_cast<std::uint32_t>(j), caf::actor_cast<caf::actor>(*backup));
  }
  auto shard = spawn_parameter_shard(sys, std::move(cfg));
  auto port = publish_on(sys, opts, shard, opts.ps_hosts[opts.task], "ps " + std::to_string(opts.task));
  if (!port) {
    caf::scoped_actor{sys}->send_exit(shard, caf::exit_reason::user_shutdown);
    return port.error();
  }
  if (backup)
    if (auto err = attach_backup(sys, opts, layout, *backup))
      node_logger(opts, role_kind::ps, opts.task)
          .warn("keeps no backup: " + describe(err) + "; its neighbour's shard has none");
  if (opts.ps_replicas > 1)
    if (auto err = catch_up(sys, opts, layout, shard))
      node_logger(opts, role_kind::ps, opts.task)
          .warn("cannot catch up on its shard: " + describe(err));
  if (hooks.on_listening) hooks.on_listening(*port);
  auto metrics = serve_ps_metrics(sys, opts, shard);
  if (!metrics) {
    caf::scoped_actor{sys}->send_exit(shard, caf::exit_reason::user_shutdown);
    return metrics.error();
  }
  // The shard asks the chief to stop the job with a checkpoint, which it
  // stays up for; the chief then ends every node.
  const logger log = node_logger(opts, role_kind::ps, opts.task);
  const stop_forwarder to_shard{sys, shard};
  armed_stop ask{hooks.stops, [&to_shard, log](const std::string& why) {
                   log.info(why + ": asking the chief to stop the job with a checkpoint");
                   to_shard.forward(why + " on " + log.node());
                 }};
  chief_back_fn rejoin;
  if (backup)
    rejoin = [&sys, &opts, &layout, shard, b = *backup](const supervisor_actor& chief) {
      return rejoin_after_hang(sys, opts, layout, chief, shard, b);
    };
  if (auto err = serve_while_led(sys, opts, shard, std::move(rejoin))) return err;
  return opts.last_step;
}

caf::expected<job_result> run_worker_node(const options& opts, const job_model& job,
                                          const node_hooks& hooks) {
  node_config cfg{opts, job.layout};
  caf::actor_system sys{cfg};
  return run_worker_node(sys, opts, job, hooks);
}

caf::expected<job_result> run_worker_node(caf::actor_system& sys, const options& opts,
                                          const job_model& job, const node_hooks& hooks) {
  auto shards = connect_shards(sys, opts);
  if (!shards) return shards.error();
  if (opts.join) {
    auto metrics = serve_worker_metrics(sys, opts);
    if (!metrics) return metrics.error();
    return run_joiner(sys, opts, job, *shards, hooks.stops);
  }
  if (opts.task != 0) {
    auto metrics = serve_worker_metrics(sys, opts);
    if (!metrics) return metrics.error();
    return run_non_chief(sys, opts, job, *shards, hooks.stops);
  }
  if (auto done = finished_before(opts))
    return serve_finished(sys, opts, job.layout, *shards, std::move(*done), hooks.on_listening);
  bool published = false;  // the supervisor outlives recoveries: published once
  const node_keeper keeper{sys, opts, job};
  auto start =
      [&](supervisor_actor supervisor, coordinator_actor coordinator,
          const std::vector<shard_actor>& current) -> caf::expected<std::vector<worker_actor>> {
    if (!published) {
      auto port = publish_on(sys, opts, supervisor, opts.worker_hosts[0], "the chief (worker 0)");
      if (!port) return port.error();
      if (hooks.on_listening) hooks.on_listening(*port);
      published = true;
    }
    return start_trainers(sys, opts, 0, job, current, supervisor, coordinator, keeper.keep);
  };
  return run_chief(sys, opts, job, *shards, start, hooks.stops);
}

}  // namespace downpour
