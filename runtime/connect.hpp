// Reaching peers: connect with retries until a deadline, and errors as text.
#pragma once

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "actors/messages.hpp"
#include "caf/io/all.hpp"
#include "config/options.hpp"

namespace downpour {

// One line for any error: our own errors carry their explanation as context.
std::string describe(const caf::error& err);

caf::error make_node_error(errc code, std::string text);

// "30 s", "0.5 s".
std::string seconds_text(double s);

// Connects to the actor published at where, retrying every 50 ms (the peer may
// not be up yet) until timeout_s; then fails naming the node and its address.
template <class Handle>
caf::expected<Handle> connect_to(caf::actor_system& sys, const host_port& where,
                                 double timeout_s, const std::string& what) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  caf::error last;
  for (;;) {
    auto h = sys.middleman().remote_actor<Handle>(where.host, where.port);
    if (h) return h;
    last = h.error();
    if (last == caf::sec::unexpected_actor_messaging_interface ||
        std::chrono::steady_clock::now() >= deadline)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return make_node_error(errc::unreachable, "cannot reach " + what + " at " + to_string(where) +
                                                " within " + seconds_text(timeout_s) + " (" +
                                                describe(last) + ")");
}

// Ports that were free a moment ago on 127.0.0.1 (the kernel's ephemeral range).
std::vector<std::uint16_t> pick_free_ports(std::size_t n);

}  // namespace downpour
