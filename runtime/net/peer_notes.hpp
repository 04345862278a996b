// Why connecting to a peer failed, as the interposed connect()
// (runtime/net/connect_guard.cpp) and OpenSSL calls (runtime/net/tls_guard.cpp)
// saw it, so that a connect that gives up can say more than CAF does: CAF
// 0.17.6 reports every failed TCP connect as "ip_connect failed", whatever
// the cause, and never answers a connect whose TLS handshake failed (it tries
// again and again inside the middleman until the request times out). Kept
// per numeric address, process-wide: the interposers are called on CAF's
// threads with no other context to keep it in.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace downpour {

// "10.0.0.7:2222", "::1:2222"; "a peer" for anything but IPv4 and IPv6.
std::string address_text(const sockaddr* addr);

// The address of the peer of a connected socket, as address_text writes it.
std::string peer_address(int fd);

enum class peer_fault {
  tcp,          // the TCP connect failed (refused, timed out, no route)
  tls_refused,  // a TLS handshake failed on a certificate or the peer's alert: not transient
  tls_broken,   // a TLS handshake ended otherwise (the connection closed)
};

struct peer_note {
  peer_fault fault = peer_fault::tcp;
  std::string why;  // ends a message: "nothing listens on that port (connection refused)"
  std::chrono::steady_clock::time_point when;
};

// Records why connecting to address (address_text's form) failed, replacing
// the earlier note.
void note_peer_failure(const std::string& address, peer_fault fault, const std::string& why);

// A TCP connect to address worked: a note of a failed one no longer holds
// (one of a failed TLS handshake still does: it comes after the connect).
void note_tcp_connected(const std::string& address);

// The newest note for host:port (host resolved as a connect resolves it)
// taken at or after since; nullopt when there is none.
std::optional<peer_note> peer_failure(const std::string& host, std::uint16_t port,
                                      std::chrono::steady_clock::time_point since);

}  // namespace downpour
