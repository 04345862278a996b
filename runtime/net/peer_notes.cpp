#include "runtime/net/peer_notes.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <map>
#include <mutex>

namespace downpour {
namespace {

// A few entries: one per peer a node connects to.
struct notes {
  std::mutex mutex;
  std::map<std::string, peer_note> by_address;
};

notes& all_notes() {
  static notes n;
  return n;
}

}  // namespace

std::string address_text(const sockaddr* addr) {
  char host[INET6_ADDRSTRLEN] = "?";
  unsigned port = 0;
  if (addr->sa_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(addr);
    ::inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
    port = ntohs(a->sin_port);
  } else if (addr->sa_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(addr);
    ::inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
    port = ntohs(a->sin6_port);
  } else {
    return "a peer";
  }
  return std::string(host) + ":" + std::to_string(port);
}

std::string peer_address(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "a peer";
  return address_text(reinterpret_cast<const sockaddr*>(&addr));
}

void note_peer_failure(const std::string& address, peer_fault fault, const std::string& why) {
  auto& n = all_notes();
  std::lock_guard<std::mutex> lock(n.mutex);
  n.by_address[address] = peer_note{fault, why, std::chrono::steady_clock::now()};
}

void note_tcp_connected(const std::string& address) {
  auto& n = all_notes();
  std::lock_guard<std::mutex> lock(n.mutex);
  if (auto it = n.by_address.find(address); it != n.by_address.end() &&
                                            it->second.fault == peer_fault::tcp)
    n.by_address.erase(it);
}

std::optional<peer_note> peer_failure(const std::string& host, std::uint16_t port,
                                      std::chrono::steady_clock::time_point since) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return {};
  std::optional<peer_note> newest;
  {
    auto& n = all_notes();
    std::lock_guard<std::mutex> lock(n.mutex);
    for (addrinfo* a = found; a; a = a->ai_next) {
      auto it = n.by_address.find(address_text(a->ai_addr));
      if (it != n.by_address.end() && it->second.when >= since &&
          (!newest || it->second.when > newest->when))
        newest = it->second;
    }
  }
  ::freeaddrinfo(found);
  return newest;
}

}  // namespace downpour
