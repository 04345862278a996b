// The metrics endpoint under slow and many clients (runtime/net/http_server):
// a slowloris of 300 loopback connections does not keep /healthz from
// answering, every slow connection is closed by the request deadline, and
// requests of more than 8 KiB are refused.
#include <doctest/doctest.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <vector>

#include "runtime/net/http_server.hpp"
#include "runtime/net/metrics_http.hpp"
#include "time_bounds.hpp"

namespace test_http_bounds {

using namespace downpour;
using namespace std::chrono_literals;
using downpour::testing::scaled;

namespace {

int connect_loopback(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  return fd;
}

bool send_text(int fd, const std::string& text) {
  return ::send(fd, text.data(), text.size(), MSG_NOSIGNAL | MSG_DONTWAIT) ==
         static_cast<ssize_t>(text.size());
}

// Everything the server sends until it closes, or until the bound.
std::string read_until_closed(int fd, std::chrono::milliseconds bound) {
  std::string text;
  const auto deadline = std::chrono::steady_clock::now() + bound;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return text;
    char buf[4096];
    const ssize_t got = ::recv(fd, buf, sizeof buf, 0);
    if (got <= 0) return text;
    text.append(buf, static_cast<std::size_t>(got));
  }
}

struct probe {
  std::string response;
  double seconds = 0;
};

// One GET on a fresh connection, timed from the connect to the close.
probe get(std::uint16_t port, const std::string& path, std::chrono::milliseconds bound) {
  const auto start = std::chrono::steady_clock::now();
  const int fd = connect_loopback(port);
  send_text(fd, "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  probe p{read_until_closed(fd, bound), 0};
  p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ::close(fd);
  return p;
}

// The slow clients of a slowloris, and how many of them the server has
// closed: seen while they wait between header lines, the attack's rhythm.
struct slow_clients {
  std::vector<pollfd> open;
  std::size_t closed = 0;

  void send_line(const std::string& line) {
    for (const pollfd& p : open) send_text(p.fd, line);
  }

  // Waits out `span`, counting each connection the server closes meanwhile.
  void watch(std::chrono::milliseconds span) {
    const auto end = std::chrono::steady_clock::now() + span;
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          end - std::chrono::steady_clock::now());
      if (left.count() <= 0) return;
      if (::poll(open.data(), open.size(), static_cast<int>(left.count())) > 0) drop_closed();
    }
  }

  void drop_closed() {
    for (auto it = open.begin(); it != open.end();) {
      if (it->revents != 0 && drained_to_close(it->fd)) {
        ::close(it->fd);
        it = open.erase(it);
        ++closed;
      } else {
        ++it;
      }
    }
  }

  // Reads what the server sent; true once it has closed the connection.
  static bool drained_to_close(int fd) {
    char buf[512];
    for (;;) {
      const ssize_t got = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
      if (got > 0) continue;
      return got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
    }
  }
};

}  // namespace

TEST_CASE("/healthz answers within 1 s while 300 slow clients send their headers line by line") {
  auto endpoint = metrics_endpoint::start("127.0.0.1", 0, [] { return std::string("x 1\n"); });
  REQUIRE(endpoint);
  const std::uint16_t port = (*endpoint)->port();
  slow_clients slow;
  for (int i = 0; i < 300; ++i) {
    slow.open.push_back(pollfd{connect_loopback(port), POLLIN, 0});
    send_text(slow.open.back().fd, "GET /metrics HTTP/1.1\r\n");
  }
  // Four seconds of the attack: every connection still open sends one more
  // header line four times a second, and /healthz is asked on a new
  // connection each round.
  const auto bound = std::chrono::duration_cast<std::chrono::milliseconds>(scaled(1s));
  for (int round = 0; round < 16; ++round) {
    slow.send_line("X-Slow: " + std::to_string(round) + "\r\n");
    const probe health = get(port, "/healthz", bound);
    CAPTURE(round);
    CHECK(health.response.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
    CHECK(health.response.find("\r\n\r\nok\n") != std::string::npos);
    CHECK(health.seconds < std::chrono::duration<double>(bound).count());
    slow.watch(250ms);
  }
  // The request deadline (2 s) closed every one of them: none held a slot.
  CHECK(slow.closed == 300);
  for (const pollfd& p : slow.open) ::close(p.fd);
  const probe metrics = get(port, "/metrics", bound);
  CHECK(metrics.response.find("\r\n\r\nx 1\n") != std::string::npos);
}

TEST_CASE("a thousand connections one after another are each answered at once") {
  auto endpoint = metrics_endpoint::start("127.0.0.1", 0, [] { return std::string(); });
  REQUIRE(endpoint);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 1000; ++i) {
    const probe health = get((*endpoint)->port(), "/healthz", 5000ms);
    REQUIRE(health.response.find("\r\n\r\nok\n") != std::string::npos);
  }
  // Measured with cpp-httplib's server: 85 s.
  CHECK(std::chrono::steady_clock::now() - start < scaled(20s));
}

TEST_CASE("a request larger than 8 KiB, an unknown path and another method get their status") {
  http_routes routes;
  routes.fixed["/healthz"] = {200, "text/plain", "ok\n"};
  http_server server("127.0.0.1", 0, routes);
  const int fd = connect_loopback(server.port());
  send_text(fd, "GET /healthz HTTP/1.1\r\nX-Big: " + std::string(9000, 'b'));
  CHECK(read_until_closed(fd, 5000ms).rfind("HTTP/1.1 431 ", 0) == 0);
  ::close(fd);
  CHECK(get(server.port(), "/nothing", 5000ms).response.rfind("HTTP/1.1 404 ", 0) == 0);
  const int post = connect_loopback(server.port());
  send_text(post, "POST /healthz HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
  CHECK(read_until_closed(post, 5000ms).rfind("HTTP/1.1 405 ", 0) == 0);
  ::close(post);
  CHECK(get(server.port(), "/healthz?probe=1", 5000ms).response.rfind("HTTP/1.1 200 ", 0) == 0);
}

}  // namespace test_http_bounds
