// A node's Prometheus endpoint (--metrics-port): GET /metrics answers in the
// text exposition format, GET /healthz answers "ok" while the node serves.
// The HTTP server (runtime/net/http_server.hpp: bounded against slow
// clients) runs on threads of its own and asks the node's actors for what
// they already count, so a scrape never runs on the training path.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "protocol/messages.hpp"
#include "config/options.hpp"

namespace downpour {

class http_server;

class metrics_endpoint {
 public:
  // The exposition text; an exception answers 503 with its message.
  using collect_fn = std::function<std::string()>;
  // Listens on bind:port (port 0: an ephemeral one); errc::unreachable names
  // the address when it cannot.
  static caf::expected<std::unique_ptr<metrics_endpoint>> start(const std::string& bind,
                                                                std::uint16_t port,
                                                                collect_fn collect);
  metrics_endpoint() = default;  // idle: use start()
  ~metrics_endpoint();
  metrics_endpoint(const metrics_endpoint&) = delete;
  metrics_endpoint& operator=(const metrics_endpoint&) = delete;
  std::uint16_t port() const;

 private:
  std::unique_ptr<http_server> server_;
};

using metrics_handle = std::unique_ptr<metrics_endpoint>;

// The chief's endpoint: the supervisor's status (the facts of `downpour status`),
// with the shards' series only when they are in this process (--role=local).
// Null when --metrics-port is 0.
caf::expected<metrics_handle> serve_chief_metrics(caf::actor_system& sys, const options& opts,
                                                  const supervisor_actor& supervisor);

// A ps node's endpoint: its shard's counters. Null when --metrics-port is 0.
caf::expected<metrics_handle> serve_ps_metrics(caf::actor_system& sys, const options& opts,
                                               const shard_actor& shard);

// A worker node's endpoint (not the chief's): its steps and its process.
// Null when --metrics-port is 0.
caf::expected<metrics_handle> serve_worker_metrics(caf::actor_system& sys, const options& opts);

}  // namespace downpour
