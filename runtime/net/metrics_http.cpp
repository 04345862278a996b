#include "runtime/net/metrics_http.hpp"

#include <httplib.h>

#include "protocol/metered_config.hpp"
#include "reporting/status_json.hpp"
#include "runtime/net/metrics_text.hpp"

namespace downpour {
namespace {

// A scrape waits this long for the actors, well inside Prometheus' default 10 s timeout.
constexpr auto ask_timeout = std::chrono::seconds(5);

void answer(const metrics_endpoint::collect_fn& collect, httplib::Response& res) {
  try {
    res.set_content(collect(), exposition_content_type);
  } catch (const std::exception& e) {
    res.status = 503;
    res.set_content(std::string("downpour: ") + e.what() + "\n", "text/plain");
  }
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
          [&](shard_stats& s) {
            facts =
                shard_facts{true, s.step, s.ranges, s.dropped, s.rejected, s.replayed, s.rows_held};
          },
          [&](caf::error& err) { failure = std::move(err); });
  if (failure) throw std::runtime_error("the shard did not answer: " + to_string(failure));
  return ps_exposition({{task, facts}}, meters_of(sys));
}

}  // namespace

caf::expected<std::unique_ptr<metrics_endpoint>> metrics_endpoint::start(const std::string& bind,
                                                                          std::uint16_t port,
                                                                          collect_fn collect) {
  auto e = std::make_unique<metrics_endpoint>();
  e->server_ = std::make_unique<httplib::Server>();
  // httplib's default adds SO_REUSEPORT, which lets a second node take a port in use.
  e->server_->set_socket_options([](auto sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  e->server_->Get("/metrics", [collect](const httplib::Request&, httplib::Response& res) {
    answer(collect, res);
  });
  e->server_->Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain");
  });
  const int bound = port == 0 ? e->server_->bind_to_any_port(bind)
                              : (e->server_->bind_to_port(bind, port) ? port : -1);
  if (bound <= 0)
    return caf::make_error(errc::unreachable, "metrics: cannot listen on " + bind + ":" +
                                                  std::to_string(port) +
                                                  " (--metrics-bind, --metrics-port)");
  e->port_ = static_cast<std::uint16_t>(bound);
  e->thread_ = std::thread([server = e->server_.get(), done = &e->done_] {
    server->listen_after_bind();
    *done = true;
  });
  // stop() is a no-op until the server runs: wait for it, so that stopping
  // right after start cannot leave the thread listening.
  while (!e->server_->is_running() && !e->done_) std::this_thread::yield();
  return e;
}

metrics_endpoint::~metrics_endpoint() {
  if (!server_) return;
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

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
