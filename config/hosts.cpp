// Host lists in TensorFlow's ClusterSpec flag format: "host:port,host:port",
// with IPv6 literals in brackets as in URLs: "[::1]:2222". The brackets are
// syntax only: host_port::host holds the bare address that sockets take.
#include <arpa/inet.h>

#include <algorithm>
#include <charconv>

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

}  // namespace

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
