#include "runtime/net/connect.hpp"

#include <arpa/inet.h>

#include <cstdio>

#include "runtime/net/peer_notes.hpp"

namespace downpour {

std::string describe(const caf::error& err) {
  if (!err) return "no error";
  if (err.category() == caf::atom("downpour")) {
    const auto& ctx = const_cast<caf::error&>(err).context();
    if (ctx.match_elements<std::string>()) return ctx.get_as<std::string>(0);
    return explain(static_cast<errc>(err.code()));
  }
  return caf::to_string(err);
}

caf::error make_node_error(errc code, std::string text) {
  return caf::make_error(code, std::move(text));
}

std::optional<std::string> final_refusal(const caf::error& err) {
  if (err == caf::sec::unexpected_actor_messaging_interface)
    return "it speaks another protocol (a different Downpour version or role)";
  if (err == caf::sec::incompatible_application_ids)
    return "it belongs to another cluster (--cluster-name) or Downpour version";
  return std::nullopt;
}

std::string listen_address(const options& opts, const host_port& at) {
  if (!opts.bind_address.empty()) return opts.bind_address;
  unsigned char buf[sizeof(in6_addr)];
  if (at.host == "localhost" || inet_pton(AF_INET, at.host.c_str(), buf) == 1 ||
      inet_pton(AF_INET6, at.host.c_str(), buf) == 1)
    return at.host;
  return "";
}

std::string handshake_hint(const caf::error& err) {
  if (err == caf::sec::cannot_connect_to_node)
    return "; nothing accepted the connection (refused, or the name does not resolve): is "
           "that node started, at that host and port?";
  if (err == caf::sec::request_timeout)
    return "; it did not answer in time: is that node hung or stopped (SIGSTOP), cut off from "
           "this one by the network, or is another program listening on its port (accepting "
           "and never answering the handshake)?";
  if (err != caf::sec::disconnect_during_handshake) return "";
  return "; it closed the connection during every handshake: do both sides use TLS "
         "(--tls-ca, --tls-cert, --tls-key) with certificates from the same CA?";
}

std::string why_unreachable(const host_port& where, const caf::error& last,
                            std::chrono::steady_clock::time_point since) {
  if (auto note = peer_failure(where.host, where.port, since)) return ": " + note->why;
  return " (" + describe(last) + ")" + handshake_hint(last);
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", s);
  return buf;
}

}  // namespace downpour
