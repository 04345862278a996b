// Ports for clusters on one machine (local tcp jobs, tests, the chaos tool),
// chosen so that two processes picking at once never get the same one: each
// port is locked (flock on a file under /tmp/downpour-ports) until its
// reservation ends, and comes from below the kernel's ephemeral range, so no
// outgoing connection is handed it between the pick and a node's bind.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace downpour {

class port_reservation {
 public:
  // n distinct ports that nothing listens on at loopback ("127.0.0.1" or
  // "::1") right now; throws std::runtime_error when none can be found.
  explicit port_reservation(std::size_t n, const std::string& loopback = "127.0.0.1");
  port_reservation(port_reservation&& other) noexcept;
  port_reservation& operator=(port_reservation&& other) noexcept;
  port_reservation(const port_reservation&) = delete;
  port_reservation& operator=(const port_reservation&) = delete;
  ~port_reservation();

  std::uint16_t operator[](std::size_t i) const { return ports_.at(i); }
  const std::vector<std::uint16_t>& list() const { return ports_; }
  std::size_t size() const { return ports_.size(); }

 private:
  void release();

  std::vector<std::uint16_t> ports_;
  std::vector<int> locks_;  // open, flock'ed lock files, one per port
};

// True when loopback ("::1" here) can be bound on this machine.
bool loopback_available(const std::string& loopback);

}  // namespace downpour
