#include "reporting/log_json.hpp"

#include <nlohmann/json.hpp>

namespace downpour {

std::string format_log_json(const json_log_fields& f) {
  nlohmann::ordered_json j;
  j["time"] = f.time;
  j["node"] = f.node;
  j["level"] = f.level;
  j["message"] = f.message;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::optional<json_log_fields> parse_log_json(const std::string& line) {
  const auto j = nlohmann::json::parse(line, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  for (const char* key : {"time", "node", "level", "message"})
    if (!j.contains(key) || !j[key].is_string()) return std::nullopt;
  return json_log_fields{j["time"], j["node"], j["level"], j["message"]};
}

}  // namespace downpour
