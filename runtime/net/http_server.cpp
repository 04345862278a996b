#include "runtime/net/http_server.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace downpour {
namespace {

using clock_type = std::chrono::steady_clock;

enum class phase { reading, computing, writing };

struct connection {
  int fd = -1;
  std::uint64_t id = 0;  // in accept order: the oldest has the smallest
  phase now = phase::reading;
  clock_type::time_point deadline;
  std::string in;   // the request so far
  std::string out;  // the answer still to send
};

const char* reason_of(int status) {
  switch (status) {
    case 200: return "OK";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 400: return "Bad Request";
    case 431: return "Request Header Fields Too Large";
    default: return "Service Unavailable";
  }
}

std::string wire_text(const http_response& r) {
  return "HTTP/1.1 " + std::to_string(r.status) + " " + reason_of(r.status) +
         "\r\nContent-Type: " + r.content_type +
         "\r\nContent-Length: " + std::to_string(r.body.size()) +
         "\r\nConnection: close\r\n\r\n" + r.body;
}

http_response plain(int status, const std::string& body) { return {status, "text/plain", body}; }

// The listening socket on bind:port; throws naming the address.
int listen_on(const std::string& bind, std::uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (::getaddrinfo(bind.c_str(), service.c_str(), &hints, &found) != 0 || !found)
    throw std::runtime_error("cannot resolve " + bind);
  int fd = -1;
  for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    // SO_REUSEADDR, not SO_REUSEPORT: a second node must not share a port in use.
    int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, 128) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd < 0) throw std::runtime_error(std::strerror(errno));
  return fd;
}

std::uint16_t bound_port(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const auto* in = reinterpret_cast<const sockaddr_in*>(&addr);  // port at the same offset in v6
  return ntohs(in->sin_port);
}

}  // namespace

struct http_server::state {
  http_routes routes;
  int listener = -1;
  int wake = -1;  // eventfd: the worker has answers, or stop
  std::map<std::uint64_t, connection> open;  // by id: oldest first
  std::uint64_t next_id = 0;
  clock_type::time_point accept_paused_until;
  std::thread loop_thread;
  std::thread worker_thread;
  // Shared with the worker.
  std::mutex mutex;
  std::condition_variable work_ready;
  std::deque<std::pair<std::uint64_t, std::function<http_response()>>> jobs;
  std::vector<std::pair<std::uint64_t, http_response>> answers;
  bool stopping = false;

  void run_loop();
  void run_worker();
  void accept_new();
  void admit(int fd);
  void on_readable(connection& c);
  void on_writable(connection& c);
  void answer(connection& c, const http_response& r);
  void route(connection& c);
  void take_answers();
  void close_expired();
  void close(std::uint64_t id);
  void notify_loop() {
    const std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake, &one, sizeof one);
  }
};

void http_server::state::close(std::uint64_t id) {
  auto it = open.find(id);
  if (it == open.end()) return;
  ::close(it->second.fd);
  open.erase(it);
}

void http_server::state::answer(connection& c, const http_response& r) {
  c.out = wire_text(r);
  c.now = phase::writing;
  c.deadline = clock_type::now() + http_write_deadline;
}

// At the cap, the oldest connection still sending its request makes room;
// when every one is busy answering, the newcomer is turned away.
void http_server::state::admit(int fd) {
  if (open.size() >= http_max_connections) {
    auto oldest = std::find_if(open.begin(), open.end(),
                               [](const auto& e) { return e.second.now == phase::reading; });
    if (oldest == open.end()) {
      ::close(fd);
      return;
    }
    close(oldest->first);
  }
  connection c;
  c.fd = fd;
  c.id = next_id++;
  c.deadline = clock_type::now() + http_request_deadline;
  open.emplace(c.id, std::move(c));
}

void http_server::state::accept_new() {
  for (;;) {
    const int fd = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      admit(fd);
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      return;
    } else if (errno != EINTR && errno != ECONNABORTED) {
      // Out of descriptors (EMFILE): the listener stays readable; rest
      // instead of spinning on it.
      accept_paused_until = clock_type::now() + std::chrono::milliseconds(100);
      return;
    }
  }
}

// The request line decides: a GET of a known path; the headers are read
// only to find their end.
void http_server::state::route(connection& c) {
  const std::string line = c.in.substr(0, c.in.find_first_of("\r\n"));
  const auto sp1 = line.find(' ');
  const auto sp2 = sp1 == std::string::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string::npos) return answer(c, plain(400, "bad request line\n"));
  if (line.compare(0, sp1, "GET") != 0) return answer(c, plain(405, "only GET\n"));
  std::string path = line.substr(sp1 + 1, sp2 - sp1 - 1);
  path = path.substr(0, path.find('?'));
  if (auto fixed = routes.fixed.find(path); fixed != routes.fixed.end())
    return answer(c, fixed->second);
  auto computed = routes.computed.find(path);
  if (computed == routes.computed.end()) return answer(c, plain(404, "not found\n"));
  std::lock_guard<std::mutex> lock(mutex);
  if (jobs.size() >= http_max_waiting)
    return answer(c, plain(503, "busy: too many requests waiting\n"));
  jobs.emplace_back(c.id, computed->second);
  c.now = phase::computing;
  c.deadline = clock_type::now() + http_compute_deadline;
  work_ready.notify_one();
}

void http_server::state::on_readable(connection& c) {
  char buf[4096];
  for (;;) {
    const ssize_t got = ::recv(c.fd, buf, sizeof buf, 0);
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (got <= 0) return close(c.id);  // closed by the client, or an error
    c.in.append(buf, static_cast<std::size_t>(got));
    if (c.in.find("\r\n\r\n") != std::string::npos || c.in.find("\n\n") != std::string::npos)
      return route(c);
    if (c.in.size() > http_max_request_bytes)
      return answer(c, plain(431, "request larger than 8192 bytes\n"));
  }
}

void http_server::state::on_writable(connection& c) {
  while (!c.out.empty()) {
    const ssize_t sent = ::send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (sent <= 0) return close(c.id);
    c.out.erase(0, static_cast<std::size_t>(sent));
  }
  close(c.id);
}

void http_server::state::take_answers() {
  std::uint64_t count = 0;
  [[maybe_unused]] auto n = ::read(wake, &count, sizeof count);
  std::vector<std::pair<std::uint64_t, http_response>> ready;
  {
    std::lock_guard<std::mutex> lock(mutex);
    ready.swap(answers);
  }
  for (auto& [id, response] : ready)
    if (auto it = open.find(id); it != open.end()) answer(it->second, response);
}

void http_server::state::close_expired() {
  const auto now = clock_type::now();
  std::vector<std::uint64_t> expired;
  for (const auto& [id, c] : open)
    if (c.deadline <= now) expired.push_back(id);
  for (auto id : expired) close(id);
}

void http_server::state::run_loop() {
  std::vector<pollfd> fds;
  std::vector<std::uint64_t> ids;
  for (;;) {
    const bool accepting = clock_type::now() >= accept_paused_until;
    fds.assign({{wake, POLLIN, 0}, {accepting ? listener : -1, POLLIN, 0}});
    ids.clear();
    auto first_deadline = accepting ? clock_type::now() + std::chrono::seconds(1)
                                    : accept_paused_until;
    for (const auto& [id, c] : open) {
      if (c.now == phase::computing) continue;
      fds.push_back({c.fd, static_cast<short>(c.now == phase::reading ? POLLIN : POLLOUT), 0});
      ids.push_back(id);
      first_deadline = std::min(first_deadline, c.deadline);
    }
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
        first_deadline - clock_type::now());
    ::poll(fds.data(), fds.size(), static_cast<int>(std::max<std::int64_t>(wait.count(), 0) + 1));
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (stopping) return;
    }
    if (fds[0].revents) take_answers();
    if (fds[1].revents) accept_new();
    for (std::size_t k = 2; k < fds.size(); ++k) {
      if (!fds[k].revents) continue;
      auto it = open.find(ids[k - 2]);
      if (it == open.end()) continue;  // closed to make room for a new one
      if (it->second.now == phase::reading) on_readable(it->second);
      else if (it->second.now == phase::writing) on_writable(it->second);
    }
    close_expired();
  }
}

void http_server::state::run_worker() {
  for (;;) {
    std::pair<std::uint64_t, std::function<http_response()>> job;
    {
      std::unique_lock<std::mutex> lock(mutex);
      work_ready.wait(lock, [&] { return stopping || !jobs.empty(); });
      if (stopping) return;
      job = std::move(jobs.front());
      jobs.pop_front();
    }
    http_response r;
    try {
      r = job.second();
    } catch (const std::exception& e) {
      r = plain(503, std::string("downpour: ") + e.what() + "\n");
    }
    {
      std::lock_guard<std::mutex> lock(mutex);
      answers.emplace_back(job.first, std::move(r));
    }
    notify_loop();
  }
}

http_server::http_server(const std::string& bind, std::uint16_t port, http_routes routes)
    : state_(std::make_unique<state>()) {
  state_->routes = std::move(routes);
  state_->listener = listen_on(bind, port);
  state_->wake = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (state_->wake < 0) {
    ::close(state_->listener);
    throw std::runtime_error(std::strerror(errno));
  }
  state_->loop_thread = std::thread([s = state_.get()] { s->run_loop(); });
  state_->worker_thread = std::thread([s = state_.get()] { s->run_worker(); });
}

http_server::~http_server() {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->stopping = true;
  }
  state_->work_ready.notify_all();
  state_->notify_loop();
  state_->loop_thread.join();
  state_->worker_thread.join();
  for (auto& [id, c] : state_->open) ::close(c.fd);
  ::close(state_->listener);
  ::close(state_->wake);
}

std::uint16_t http_server::port() const { return bound_port(state_->listener); }

}  // namespace downpour
