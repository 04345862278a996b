// Port reservations: what keeps two tests run side by side (ctest -j2) from
// starting clusters on the same port.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <string>

#include "runtime/net/ports.hpp"

namespace test_ports {

using namespace downpour;

namespace {

// True when another open file description could lock port's file right now.
bool lockable(std::uint16_t port) {
  const std::string path = "/tmp/downpour-ports/" + std::to_string(port);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  REQUIRE(fd >= 0);
  const bool got = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  ::close(fd);
  return got;
}

}  // namespace

TEST_CASE("two reservations held at once never share a port") {
  const port_reservation a(64), b(64);
  std::set<std::uint16_t> all(a.list().begin(), a.list().end());
  all.insert(b.list().begin(), b.list().end());
  CHECK(all.size() == 128);
}

TEST_CASE("reserved ports lie below the kernel's ephemeral range, where no connect() lands") {
  unsigned low = 32768, high = 60999;
  std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> low >> high;
  const port_reservation r(8);
  for (auto port : r.list()) {
    CHECK(port >= 1024);
    CHECK(port < low);
  }
}

TEST_CASE("a reserved port stays locked for other processes until its reservation ends") {
  std::uint16_t port = 0;
  {
    const port_reservation r(1);
    port = r[0];
    CHECK_FALSE(lockable(port));
    port_reservation first(2);
    const auto kept = first[1];
    const port_reservation second = std::move(first);  // the locks move with it
    CHECK_FALSE(lockable(kept));
  }
  CHECK(lockable(port));
}

}  // namespace test_ports
