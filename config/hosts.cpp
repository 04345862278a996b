// Host lists in TensorFlow's ClusterSpec flag format: "host:port,host:port",
// with IPv6 literals in brackets as in URLs: "[::1]:2222". The brackets are
// syntax only: host_port::host holds the bare address that sockets take.
#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>

#include "config/options.hpp"

namespace downpour {
namespace {

std::string trim(const std::string& s) {
  const char* space = " \t\r\n";
  const auto first = s.find_first_not_of(space);
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(space) - first + 1);
}

std::optional<std::uint16_t> parse_port(const std::string& port) {
  unsigned value = 0;
  const char* end = port.data() + port.size();
  auto [ptr, ec] = std::from_chars(port.data(), end, value);
  if (port.empty() || ec != std::errc() || ptr != end || value > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(value);
}

// An IPv6 address, maybe with a zone ("fe80::1%eth0").
bool is_ipv6_literal(const std::string& text) {
  const auto zone = text.find('%');
  if (zone != std::string::npos &&
      (zone + 1 == text.size() || text.find_first_of("[]% \t", zone + 1) != std::string::npos))
    return false;
  in6_addr address{};
  return ::inet_pton(AF_INET6, text.substr(0, zone).c_str(), &address) == 1;
}

// "[addr]" -> "addr" for an IPv6 literal; a bare name or IPv4 address as it
// is; nullopt for anything else (stray brackets, blanks, an unbracketed IPv6
// address whose port could not be told apart).
std::optional<std::string> parse_host(const std::string& text) {
  if (text.empty() || text.find_first_of(" \t") != std::string::npos) return std::nullopt;
  if (text.front() == '[') {
    if (text.size() < 3 || text.back() != ']') return std::nullopt;
    std::string inner = text.substr(1, text.size() - 2);
    return is_ipv6_literal(inner) ? std::optional<std::string>(inner) : std::nullopt;
  }
  if (text.find_first_of("[]:") != std::string::npos) return std::nullopt;
  return text;
}

std::optional<host_port> parse_entry(const std::string& entry) {
  const auto colon = entry.rfind(':');
  if (colon == std::string::npos) return std::nullopt;
  auto host = parse_host(entry.substr(0, colon));
  auto port = parse_port(entry.substr(colon + 1));
  if (!host || !port) return std::nullopt;
  return host_port{*host, *port};
}

// The addresses a host name stands for; the name itself (lower case, no
// brackets) when it does not resolve here, so that two spellings of one
// unresolvable name still compare equal.
std::set<std::string> addresses_of(const std::string& host) {
  std::string name = host;
  if (name.size() > 2 && name.front() == '[' && name.back() == ']')
    name = name.substr(1, name.size() - 2);
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::set<std::string> found;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  if (::getaddrinfo(name.c_str(), nullptr, &hints, &list) == 0) {
    for (const addrinfo* a = list; a; a = a->ai_next) {
      char text[INET6_ADDRSTRLEN] = "";
      const void* where = a->ai_family == AF_INET
                              ? static_cast<const void*>(
                                    &reinterpret_cast<const sockaddr_in*>(a->ai_addr)->sin_addr)
                              : static_cast<const void*>(
                                    &reinterpret_cast<const sockaddr_in6*>(a->ai_addr)->sin6_addr);
      if (::inet_ntop(a->ai_family, where, text, sizeof text)) found.insert(text);
    }
    ::freeaddrinfo(list);
  }
  if (found.empty()) found.insert(name);
  return found;
}

bool shared_address(const std::set<std::string>& a, const std::set<std::string>& b) {
  return std::any_of(a.begin(), a.end(), [&](const std::string& x) { return b.count(x) > 0; });
}

}  // namespace

void check_distinct_hosts(const std::vector<named_host>& nodes) {
  std::vector<std::set<std::string>> resolved;
  for (const auto& n : nodes) resolved.push_back(addresses_of(n.where.host));
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      const auto& a = nodes[j];
      const auto& b = nodes[i];
      // Port 0 asks for an ephemeral port: each such node gets its own.
      if (a.where.port == 0 || a.where.port != b.where.port) continue;
      if (!shared_address(resolved[j], resolved[i])) continue;
      throw config_error("config: " + b.option + " entry " + to_string(b.where) + " (" + b.node +
                         ") is the same address as " + a.option + " entry " + to_string(a.where) +
                         " (" + a.node + ") (expected its own host:port for every ps and worker)");
    }
  }
}

std::vector<host_port> parse_host_list(const std::string& text, const std::string& option_name) {
  if (trim(text).empty())
    throw config_error("config: " + option_name +
                       " is empty (expected a comma-separated list of host:port)");
  std::vector<host_port> hosts;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const auto comma = std::min(text.find(',', begin), text.size());
    const std::string entry = trim(text.substr(begin, comma - begin));
    auto parsed = parse_entry(entry);
    if (!parsed)
      throw config_error("config: " + option_name + " entry '" + entry +
                         "' is malformed (expected host:port or [IPv6]:port with port 0-65535)");
    hosts.push_back(*parsed);
    begin = comma + 1;
  }
  return hosts;
}

std::string parse_address(const std::string& text, const std::string& option_name) {
  std::string host = trim(text);
  if (!host.empty() && host.front() != '[' && host.find(':') != std::string::npos)
    host = "[" + host + "]";  // a bare IPv6 address is allowed here: no port to tell apart
  auto parsed = parse_host(host);
  if (!parsed)
    throw config_error("config: " + option_name + "=" + text +
                       " is malformed (expected a host name, an IPv4 address or an IPv6 "
                       "address, without a port)");
  return *parsed;
}

std::string to_string(const host_port& h) {
  const bool ipv6 = h.host.find(':') != std::string::npos;
  return (ipv6 ? "[" + h.host + "]" : h.host) + ":" + std::to_string(h.port);
}

std::string to_string(const std::vector<host_port>& hosts) {
  std::string text;
  for (const auto& h : hosts) text += (text.empty() ? "" : ",") + to_string(h);
  return text;
}

}  // namespace downpour
