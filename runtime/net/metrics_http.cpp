#include "runtime/net/metrics_http.hpp"

#include "actors/parameter_shard.hpp"
#include "protocol/metered_config.hpp"
#include "reporting/status_json.hpp"
#include "runtime/net/http_server.hpp"
#include "runtime/net/metrics_text.hpp"

namespace downpour {
namespace {

// A scrape waits this long for the actors, well inside Prometheus' default 10 s timeout.
constexpr auto ask_timeout = std::chrono::seconds(5);

// A collect that throws answers 503 with its message (http_server).
http_response exposition_response(const metrics_endpoint::collect_fn& collect) {
  return {200, exposition_content_type, collect()};
}

std::string ask_supervisor(caf::actor_system& sys, const supervisor_actor& supervisor,
                           shard_series shards) {
  caf::scoped_actor self{sys};
  std::string facts;
  caf::error failure;
  self->request(supervisor, ask_timeout, status_atom_v)
      .receive([&](std::string& text) { facts = std::move(text); },
               [&](caf::error& err) { failure = std::move(err); });
  if (failure) throw std::runtime_error("the chief did not answer: " + to_string(failure));
  return chief_exposition(parse_status_json(facts), shards, meters_of(sys));
}

std::string ask_shard(caf::actor_system& sys, const shard_actor& shard, std::size_t task) {
  caf::scoped_actor self{sys};
  shard_facts facts;
  caf::error failure;
  self->request(shard, ask_timeout, stats_atom_v)
      .receive(
          [&](shard_stats& s) { facts = facts_of(s); },
          [&](caf::error& err) { failure = std::move(err); });
  if (failure) throw std::runtime_error("the shard did not answer: " + to_string(failure));
  return ps_exposition({{task, facts}}, meters_of(sys));
}

}  // namespace

caf::expected<std::unique_ptr<metrics_endpoint>> metrics_endpoint::start(const std::string& bind,
                                                                          std::uint16_t port,
                                                                          collect_fn collect) {
  http_routes routes;
  routes.fixed["/healthz"] = {200, "text/plain", "ok\n"};
  routes.computed["/metrics"] = [collect] { return exposition_response(collect); };
  auto e = std::make_unique<metrics_endpoint>();
  try {
    e->server_ = std::make_unique<http_server>(bind, port, std::move(routes));
  } catch (const std::runtime_error& err) {
    return caf::make_error(errc::unreachable, "metrics: cannot listen on " + bind + ":" +
                                                  std::to_string(port) + " (" + err.what() +
                                                  "; --metrics-bind, --metrics-port)");
  }
  return e;
}

metrics_endpoint::~metrics_endpoint() = default;

std::uint16_t metrics_endpoint::port() const { return server_ ? server_->port() : 0; }

caf::expected<metrics_handle> serve_chief_metrics(caf::actor_system& sys, const options& opts,
                                                  const supervisor_actor& supervisor) {
  if (opts.metrics_port == 0) return metrics_handle{};
  // A local job's shards are in this process: their series come from here.
  const auto shards =
      opts.role == role_kind::local ? shard_series::here : shard_series::at_each_ps;
  return metrics_endpoint::start(
      opts.metrics_bind, opts.metrics_port,
      [&sys, supervisor, shards] { return ask_supervisor(sys, supervisor, shards); });
}

caf::expected<metrics_handle> serve_ps_metrics(caf::actor_system& sys, const options& opts,
                                               const shard_actor& shard) {
  if (opts.metrics_port == 0) return metrics_handle{};
  const std::size_t task = opts.task;
  return metrics_endpoint::start(opts.metrics_bind, opts.metrics_port, [&sys, shard, task] {
    return ask_shard(sys, shard, task);
  });
}

caf::expected<metrics_handle> serve_worker_metrics(caf::actor_system& sys, const options& opts) {
  if (opts.metrics_port == 0) return metrics_handle{};
  return metrics_endpoint::start(opts.metrics_bind, opts.metrics_port,
                                 [&sys] { return worker_exposition(meters_of(sys)); });
}

}  // namespace downpour
