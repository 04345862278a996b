#include "runtime/net/ports.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <stdexcept>
#include <utility>

namespace downpour {
namespace {

const char* const lock_dir = "/tmp/downpour-ports";

// [first, last) below the kernel's ephemeral range (32768 by default), which
// bind(0) and connect() draw from.
std::pair<unsigned, unsigned> candidate_range() {
  unsigned low = 32768, high = 60999;
  std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> low >> high;
  if (low >= 2048 + 1024) return {std::max(1024u, low - 8192), low};
  return {high + 1, 65536};  // an ephemeral range that starts low: use the ports above it
}

// True when a listening socket could bind loopback:port now (no SO_REUSEADDR,
// so a port with connections in TIME_WAIT is skipped too).
bool bindable(const std::string& loopback, std::uint16_t port) {
  const bool v6 = loopback.find(':') != std::string::npos;
  const int fd = ::socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_storage storage{};
  socklen_t len = 0;
  if (v6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&storage);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(port);
    len = ::inet_pton(AF_INET6, loopback.c_str(), &a->sin6_addr) == 1 ? sizeof *a : 0;
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&storage);
    a->sin_family = AF_INET;
    a->sin_port = htons(port);
    len = ::inet_pton(AF_INET, loopback.c_str(), &a->sin_addr) == 1 ? sizeof *a : 0;
  }
  const bool ok = len > 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&storage), len) == 0;
  ::close(fd);
  return ok;
}

// The open lock file of port, locked for this process, or -1 when another
// process holds it (or it cannot be made).
int lock_port(std::uint16_t port) {
  const std::string path = std::string(lock_dir) + "/" + std::to_string(port);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) return -1;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

port_reservation::port_reservation(std::size_t n, const std::string& loopback) {
  if (::mkdir(lock_dir, 01777) == 0) ::chmod(lock_dir, 01777);  // shared by every user
  const auto [first, last] = candidate_range();
  const unsigned span = last - first;
  // Processes start at different places, so they rarely contend for a lock.
  const auto seed = static_cast<unsigned>(::getpid()) * 7919u +
                    static_cast<unsigned>(std::chrono::steady_clock::now().time_since_epoch().count());
  for (unsigned i = 0; i < span && ports_.size() < n; ++i) {
    const auto port = static_cast<std::uint16_t>(first + (seed + i) % span);
    const int fd = lock_port(port);
    if (fd < 0) continue;
    if (!bindable(loopback, port)) {
      ::close(fd);
      continue;
    }
    locks_.push_back(fd);
    ports_.push_back(port);
  }
  if (ports_.size() < n) {
    release();
    throw std::runtime_error("cannot reserve " + std::to_string(n) + " free ports on " + loopback +
                             " from " + std::to_string(first) + "-" + std::to_string(last - 1) +
                             " (locks under " + lock_dir + ")");
  }
}

port_reservation::port_reservation(port_reservation&& other) noexcept
    : ports_(std::move(other.ports_)), locks_(std::move(other.locks_)) {
  other.ports_.clear();
  other.locks_.clear();
}

port_reservation& port_reservation::operator=(port_reservation&& other) noexcept {
  if (this != &other) {
    release();
    ports_ = std::move(other.ports_);
    locks_ = std::move(other.locks_);
    other.ports_.clear();
    other.locks_.clear();
  }
  return *this;
}

port_reservation::~port_reservation() { release(); }

void port_reservation::release() {
  for (int fd : locks_) ::close(fd);
  locks_.clear();
  ports_.clear();
}

bool loopback_available(const std::string& loopback) {
  return bindable(loopback, 0);
}

}  // namespace downpour
