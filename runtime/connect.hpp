// Reaching peers: connect with retries until a deadline, and errors as text.
#pragma once

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "actors/messages.hpp"
#include <optional>

#include "caf/io/all.hpp"
#include "caf/openssl/all.hpp"
#include "config/options.hpp"
#include "runtime/tls_guard.hpp"

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

// Connects to the actor published at where (over mutual TLS when configured),
// retrying every 50 ms (the peer may not be up yet) until --connect-timeout;
// then fails naming the node and its address.
template <class Handle>
caf::expected<Handle> connect_to(caf::actor_system& sys, const options& opts,
                                 const host_port& where, const std::string& what) {
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration<double>(opts.connect_timeout_s);
  caf::error last;
  if (opts.tls()) tls_guard_linked();
  for (;;) {
    auto h = opts.tls() ? caf::openssl::remote_actor<Handle>(sys, where.host, where.port)
                        : sys.middleman().remote_actor<Handle>(where.host, where.port);
    if (h) return h;
    last = h.error();
    if (auto why = final_refusal(last))
      return make_node_error(errc::unreachable,
                             what + " at " + to_string(where) + " refused us: " + *why);
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return make_node_error(errc::unreachable, "cannot reach " + what + " at " + to_string(where) +
                                                " within " + seconds_text(opts.connect_timeout_s) +
                                                " (" + describe(last) + ")" +
                                                handshake_hint(last));
}

// Publishes an actor on the node's own host:port (over mutual TLS when
// configured), bound to --bind or the host of that entry.
template <class Handle>
caf::expected<std::uint16_t> publish_on(caf::actor_system& sys, const options& opts,
                                        const Handle& h, const host_port& at,
                                        const std::string& what) {
  const std::string& address = opts.bind_address.empty() ? at.host : opts.bind_address;
  if (opts.tls()) tls_guard_linked();
  auto port = opts.tls() ? caf::openssl::publish(h, at.port, address.c_str(), true)
                         : sys.middleman().publish(h, at.port, address.c_str(), true);
  if (!port)
    return make_node_error(errc::unreachable, "cannot listen as " + what + " on " + address +
                                                  ":" + std::to_string(at.port) + " (" +
                                                  describe(port.error()) +
                                                  "); is the port in use?");
  return port;
}

// Ports that were free a moment ago on 127.0.0.1 (the kernel's ephemeral range).
std::vector<std::uint16_t> pick_free_ports(std::size_t n);

}  // namespace downpour
