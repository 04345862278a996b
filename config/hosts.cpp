// Host lists in TensorFlow's ClusterSpec flag format: "host:port,host:port".
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

// The last colon splits, so a bracketed IPv6 host such as [::1]:2222 parses.
std::optional<host_port> parse_entry(const std::string& entry) {
  const auto colon = entry.rfind(':');
  if (colon == std::string::npos || colon == 0) return std::nullopt;
  const std::string host = entry.substr(0, colon);
  const std::string port = entry.substr(colon + 1);
  if (host.find_first_of(" \t") != std::string::npos) return std::nullopt;
  unsigned value = 0;
  const char* end = port.data() + port.size();
  auto [ptr, ec] = std::from_chars(port.data(), end, value);
  if (port.empty() || ec != std::errc() || ptr != end || value > 65535) return std::nullopt;
  return host_port{host, static_cast<std::uint16_t>(value)};
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
                         "' is malformed (expected host:port with port 0-65535)");
    hosts.push_back(*parsed);
    begin = comma + 1;
  }
  return hosts;
}

std::string to_string(const host_port& h) {
  return h.host + ":" + std::to_string(h.port);
}

std::string to_string(const std::vector<host_port>& hosts) {
  std::string text;
  for (const auto& h : hosts) text += (text.empty() ? "" : ",") + to_string(h);
  return text;
}

}  // namespace downpour
