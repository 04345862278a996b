// A raw TCP peer for tests that play a hostile stranger: hand-made BASP
// headers, truncated ones, silence; and the memory a process holds.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>

#include "config/durations.hpp"

namespace downpour::testing {

// CAF 0.17.6's 32-byte BASP header (caf/io/basp/header.hpp), big-endian:
// operation, two padding bytes, flags, payload_len, operation_data,
// source_actor, dest_actor.
inline std::string basp_header(std::uint8_t operation, std::uint32_t payload_len) {
  std::string h(32, '\0');
  h[0] = static_cast<char>(operation);
  for (int i = 0; i < 4; ++i) h[4 + i] = static_cast<char>(payload_len >> (24 - 8 * i));
  return h;
}

inline constexpr std::uint8_t basp_client_handshake = 0x01;

class raw_peer {
 public:
  explicit raw_peer(std::uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    if (fd_ < 0) throw std::runtime_error("socket() failed");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
      throw std::runtime_error("cannot connect to 127.0.0.1:" + std::to_string(port));
  }
  raw_peer(const raw_peer&) = delete;
  raw_peer& operator=(const raw_peer&) = delete;
  ~raw_peer() { ::close(fd_); }

  void send(const std::string& bytes) {
    if (::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(bytes.size()))
      throw std::runtime_error("send() failed");
  }

  // Whether the other side has closed the connection by now (what it sent
  // is read and dropped); never blocks.
  bool closed_now() {
    char buf[4096];
    for (;;) {
      const auto got = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
      if (got == 0) return true;
      if (got < 0) return false;  // nothing more to read yet: still open
    }
  }

  int fd() const { return fd_; }

  // Whether the other side closed the connection within timeout (whatever it
  // sent first, e.g. its own handshake, is read and dropped).
  bool closed_within(std::chrono::milliseconds timeout) {
    const deadline until{timeout};
    char buf[4096];
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until.left());
      if (left.count() <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
      if (::recv(fd_, buf, sizeof buf, 0) <= 0) return true;
    }
  }

 private:
  int fd_;
};

// A field of /proc/PID/status in KiB (VmRSS, VmHWM), -1 if the process is gone.
inline long proc_status_kb(int pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string key;
  long value = -1;
  while (in >> key) {
    if (key == field + ":") {
      in >> value;
      return value;
    }
    in.ignore(1 << 12, '\n');
  }
  return -1;
}

}  // namespace downpour::testing
