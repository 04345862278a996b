// Reaching peers: connect with retries until a deadline, and errors as text.
#pragma once

#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "protocol/messages.hpp"
#include <optional>

#include "reporting/log.hpp"
#include "config/durations.hpp"
#include "caf/io/all.hpp"
#include "caf/openssl/all.hpp"
#include "config/options.hpp"
#include "runtime/net/connect_guard.hpp"
#include "runtime/net/peer_notes.hpp"
#include "runtime/net/tls_guard.hpp"

namespace downpour {

// One line for any error: our own errors carry their explanation as context.
std::string describe(const caf::error& err);

caf::error make_node_error(errc code, std::string text);

// "30 s", "0.5 s".
std::string seconds_text(double s);

// Why an attempt to reach a peer must not be retried: it answered, but it
// belongs elsewhere (another interface, cluster, version or CA).
std::optional<std::string> final_refusal(const caf::error& err);

// For a peer that closed every handshake: what to check (TLS on one side only,
// or certificates from two CAs); empty for other errors.
std::string handshake_hint(const caf::error& err);

// Why the last attempt to reach where failed, as a connect's message ends:
// what the connect and TLS guards saw (peer_notes.hpp: nothing listening,
// no route, the TLS handshake refused and why), else CAF's error with a hint.
std::string why_unreachable(const host_port& where, const caf::error& last,
                            std::chrono::steady_clock::time_point since);

// One attempt to reach the actor published at host:port, given up after
// timeout. CAF's own remote_actor waits forever for a peer that accepted the
// connection but never answers the handshake (a hung or stopped node); this
// asks the middleman (or the TLS manager) for the same connect with a bound.
// A TLS handshake the peer refused (a certificate of another CA, its alert)
// CAF retries inside the middleman and never answers; the TLS guard notes it
// (peer_notes.hpp), so the attempt looks every 50 ms and ends with
// errc::unreachable and the reason instead of waiting out the timeout.
template <class Handle>
caf::expected<Handle> remote_actor_within(caf::actor_system& sys, bool tls,
                                          const std::string& host, std::uint16_t port,
                                          caf::timespan timeout) {
  auto manager = tls ? sys.openssl_manager().actor_handle() : sys.middleman().actor_handle();
  const auto started = std::chrono::steady_clock::now();
  caf::scoped_actor self{sys};
  // The answer reaches self as an ordinary message, so self can look at the notes meanwhile.
  auto asker = sys.spawn([manager, host, port, timeout,
                          waiter = caf::actor_cast<caf::actor>(self)](caf::event_based_actor* a) {
    a->request(manager, timeout, caf::connect_atom::value, host, port)
        .then([=](const caf::node_id&, caf::strong_actor_ptr& ptr,
                  std::set<std::string>& ifs) { a->send(waiter, std::move(ptr), std::move(ifs)); },
              [=](caf::error& err) { a->send(waiter, std::move(err)); });
  });
  caf::expected<Handle> result{caf::make_error(caf::sec::request_timeout)};
  for (bool waiting = true; waiting;) {
    self->receive(
        [&](caf::strong_actor_ptr& ptr, std::set<std::string>& ifs) {
          if (!ptr)
            result = caf::make_error(caf::sec::no_actor_published_at_port, port);
          else if (!sys.assignable<Handle>(ifs))
            result = caf::make_error(caf::sec::unexpected_actor_messaging_interface);
          else
            result = caf::actor_cast<Handle>(std::move(ptr));
          waiting = false;
        },
        [&](caf::error& err) {
          result = std::move(err);
          waiting = false;
        },
        caf::after(std::chrono::milliseconds(50)) >> [&] {
          const auto note = tls ? peer_failure(host, port, started) : std::nullopt;
          if (!note || note->fault != peer_fault::tls_refused) return;
          result = make_node_error(errc::unreachable, note->why);
          waiting = false;
        });
  }
  self->send_exit(asker, caf::exit_reason::kill);
  // CAF's own failure may come before a pause lets us look: the note of a
  // refused handshake still says why, at once rather than after every retry.
  if (!result && tls && result.error() != errc::unreachable) {
    const auto note = peer_failure(host, port, started);
    if (note && note->fault == peer_fault::tls_refused)
      result = make_node_error(errc::unreachable, note->why);
  }
  return result;
}

// connect_to up to until. A failure names --connect-timeout however much of
// it was left (connect_live retries with what remains of its own). Each
// attempt is bounded by the time left, so a peer that accepts and never
// answers cannot hold us past the deadline.
template <class Handle>
caf::expected<Handle> connect_until(caf::actor_system& sys, const options& opts,
                                    const host_port& where, const std::string& what,
                                    const deadline& until) {
  const logger log = node_logger(opts, opts.role, opts.task);
  const auto started = std::chrono::steady_clock::now();
  caf::error last;
  connect_guard_linked();
  if (opts.tls()) tls_guard_linked();
  for (int attempt = 1;; ++attempt) {
    const auto left = std::max(until.left(), caf::timespan{std::chrono::milliseconds(1)});
    auto h = remote_actor_within<Handle>(sys, opts.tls(), where.host, where.port, left);
    if (h) {
      log.debug("connected to " + what + " at " + to_string(where) + " (attempt " +
                std::to_string(attempt) + ")");
      return h;
    }
    // An attempt cut off by the deadline says less than a refusal before it.
    if (!(last && h.error() == caf::sec::request_timeout && until.passed()))
      last = h.error();
    if (auto why = final_refusal(last))
      return make_node_error(errc::unreachable, "refused " + what + " at " + to_string(where) +
                                                    ": " + *why);
    if (last == errc::unreachable)  // the peer refused our TLS handshake
      return make_node_error(errc::unreachable, "cannot reach " + what + " at " +
                                                    to_string(where) + ": " + describe(last));
    if (attempt == 1)  // not yet resolvable, not yet listening: normal while a cluster starts
      log.debug("cannot reach " + what + " at " + to_string(where) + " yet (" + describe(last) +
                "); trying again until --connect-timeout");
    if (until.passed()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return make_node_error(errc::unreachable, "cannot reach " + what + " at " + to_string(where) +
                                                " within " + seconds_text(opts.connect_timeout_s) +
                                                why_unreachable(where, last, started));
}

// Connects to the actor published at where (over mutual TLS when configured),
// retrying every 50 ms (the peer may not be up yet) until --connect-timeout;
// then fails naming the node and its address.
template <class Handle>
caf::expected<Handle> connect_to(caf::actor_system& sys, const options& opts,
                                 const host_port& where, const std::string& what) {
  return connect_until<Handle>(sys, opts, where, what, deadline::in_seconds(opts.connect_timeout_s));
}

// True when h is known dead: monitoring a proxy whose connection is lost
// delivers the down message at once (CAF attaches to a terminated actor
// synchronously), so no waiting is involved.
template <class Handle>
bool is_gone(caf::actor_system& sys, const Handle& h) {
  if (!h) return true;
  caf::scoped_actor self{sys};
  self->monitor(h);
  bool gone = false;
  self->receive([&](caf::down_msg&) { gone = true; },
                caf::after(std::chrono::milliseconds(0)) >> [] {});
  if (!gone) self->demonitor(caf::actor_cast<caf::actor_addr>(h));
  return gone;
}

// connect_until for a peer that may have just died: right after a failure
// the middleman can hand back its cached dead proxy, so a dead handle is
// dropped and the attempt repeated (every 20 ms) until the deadline.
template <class Handle>
caf::expected<Handle> connect_live_until(caf::actor_system& sys, const options& opts,
                                         const host_port& where, const std::string& what,
                                         const deadline& until) {
  for (;;) {
    auto h = connect_until<Handle>(sys, opts, where, what, until);
    if (!h || !is_gone(sys, *h)) return h;
    if (until.passed())
      return make_node_error(errc::unreachable, "cannot reach " + what + " at " +
                                                    to_string(where) + " within " +
                                                    seconds_text(opts.connect_timeout_s));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// connect_live_until --connect-timeout from now.
template <class Handle>
caf::expected<Handle> connect_live(caf::actor_system& sys, const options& opts,
                                   const host_port& where, const std::string& what) {
  return connect_live_until<Handle>(sys, opts, where, what,
                                    deadline::in_seconds(opts.connect_timeout_s));
}

// Where a node listens for its entry at: --bind when given; else the entry's
// host when it is an address (127.0.0.1, ::1, 10.0.0.5) or localhost; else,
// for a name (a Kubernetes Service, a DNS name that may not resolve yet when
// the node starts), every interface, as TensorFlow's servers do. Empty means
// every interface (IPv4 and IPv6).
std::string listen_address(const options& opts, const host_port& at);

// Publishes an actor on the node's own port (over mutual TLS when
// configured), at listen_address.
template <class Handle>
caf::expected<std::uint16_t> publish_on(caf::actor_system& sys, const options& opts,
                                        const Handle& h, const host_port& at,
                                        const std::string& what) {
  const std::string address = listen_address(opts, at);
  const char* in = address.empty() ? nullptr : address.c_str();
  const std::string shown = address.empty() ? "every interface, port " + std::to_string(at.port)
                                            : to_string(host_port{address, at.port});
  if (opts.tls()) tls_guard_linked();
  auto port = opts.tls() ? caf::openssl::publish(h, at.port, in, true)
                         : sys.middleman().publish(h, at.port, in, true);
  if (!port)
    return make_node_error(errc::unreachable, "cannot listen as " + what + " on " + shown +
                                                  " (" + describe(port.error()) +
                                                  "); is the port in use?");
  node_logger(opts, opts.role, opts.task)
      .info("listening as " + what + " on " +
            (address.empty() ? "every interface, port " + std::to_string(*port) + " (for " +
                                   to_string(at) + ")"
                             : to_string(host_port{address, *port})));
  return port;
}

}  // namespace downpour
