// The HTTP side of a node's metrics endpoint: GET requests answered by one
// poll loop that no client can hold, however slowly it sends.
//
// cpp-httplib, used before, gives each connection a pool thread (8 of them)
// for as long as its client sends a byte within the 5 s read timeout: it has
// no deadline on a whole request, no cap on connections and no way to close
// one from outside the library (the accepted socket never leaves it). 300
// clients sending a header line a second (a slowloris) kept /healthz from
// answering for as long as they lasted. Here every connection is bounded:
//   - the request line and headers must arrive whole within
//     http_request_deadline of the accept, in at most http_max_request_bytes
//     (else the connection is closed; 431 when too large);
//   - at most http_max_connections are open: a new connection closes the
//     oldest one that has not sent a whole request yet;
//   - the answer must be taken within http_write_deadline;
//   - one request per connection (Connection: close).
// Fixed answers (/healthz) are given on the loop at once. Computed ones
// (/metrics asks the node's actors) run on one worker thread, at most
// http_max_waiting queued (503 beyond), so a slow scrape never delays /healthz.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

namespace downpour {

inline constexpr std::chrono::milliseconds http_request_deadline{2000};
inline constexpr std::chrono::milliseconds http_write_deadline{5000};
// A computed answer waits for the node's actors (5 s at most) and the queue before it.
inline constexpr std::chrono::milliseconds http_compute_deadline{15000};
inline constexpr std::size_t http_max_request_bytes = 8192;
inline constexpr std::size_t http_max_connections = 64;
inline constexpr std::size_t http_max_waiting = 4;

struct http_response {
  int status = 200;
  std::string content_type = "text/plain";
  std::string body;
};

struct http_routes {
  std::map<std::string, http_response> fixed;                         // path -> answer
  std::map<std::string, std::function<http_response()>> computed;     // path -> how to answer
};

class http_server {
 public:
  // Listens on bind:port (port 0: an ephemeral one) and serves routes until
  // destroyed. Throws std::runtime_error when it cannot listen.
  http_server(const std::string& bind, std::uint16_t port, http_routes routes);
  ~http_server();
  http_server(const http_server&) = delete;
  http_server& operator=(const http_server&) = delete;

  std::uint16_t port() const;

 private:
  struct state;
  std::unique_ptr<state> state_;
};

}  // namespace downpour
