#include "runtime/net/connect_guard.hpp"

#include "runtime/net/peer_notes.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "config/durations.hpp"

namespace downpour {
namespace {

int raw_connect(int fd, const sockaddr* addr, socklen_t len) {
  return static_cast<int>(::syscall(SYS_connect, fd, addr, len));
}

bool blocking_stream(int fd, int flags, const sockaddr* addr) {
  if (flags < 0 || (flags & O_NONBLOCK) || !addr) return false;
  if (addr->sa_family != AF_INET && addr->sa_family != AF_INET6) return false;
  int type = 0;
  socklen_t size = sizeof type;
  return ::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &size) == 0 && type == SOCK_STREAM;
}

// A connect in progress: 0 once established, else -1 with errno set
// (ETIMEDOUT after the bound).
int await_connected(int fd) {
  const deadline until{connect_attempt_bound};
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until.left());
    pollfd p{fd, POLLOUT, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return -1;
    if (ready == 0) {
      errno = ETIMEDOUT;
      return -1;
    }
    int err = 0;
    socklen_t size = sizeof err;
    if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &size) != 0) return -1;
    if (err == 0) return 0;
    errno = err;
    return -1;
  }
}

// What a failed connect tells the one who gave up on the peer (peer_notes.hpp).
std::string connect_fault(int err) {
  switch (err) {
    case ECONNREFUSED:
      return "nothing listens on that port (connection refused)";
    case ETIMEDOUT:
      return "no answer to the TCP connect within 2 s: is the host down, or cut off from this one?";
    case EHOSTUNREACH:
    case ENETUNREACH:
      return std::string("no route to that host (") + std::strerror(err) + ")";
    default:
      return std::string("the TCP connect failed (") + std::strerror(err) + ")";
  }
}

}  // namespace

bool connect_guard_linked() { return true; }

}  // namespace downpour

// Replaces libc's connect() for the whole process (libcaf_io's calls
// included): the same call, bounded for blocking TCP sockets.
extern "C" int connect(int fd, const sockaddr* addr, socklen_t len) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (!downpour::blocking_stream(fd, flags, addr)) return downpour::raw_connect(fd, addr, len);
  if (::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) return downpour::raw_connect(fd, addr, len);
  int result = downpour::raw_connect(fd, addr, len);
  if (result != 0 && errno == EINPROGRESS) result = downpour::await_connected(fd);
  const int saved = errno;
  const std::string peer = downpour::address_text(addr);
  if (result == 0)
    downpour::note_tcp_connected(peer);
  else
    downpour::note_peer_failure(peer, downpour::peer_fault::tcp, downpour::connect_fault(saved));
  ::fcntl(fd, F_SETFL, flags);
  errno = saved;
  return result;
}
