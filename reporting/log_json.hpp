// --log-format=json: the fields of the text format (reporting/log.hpp), one
// JSON object per line, for log shippers (Fluent Bit, Vector, Loki):
//   {"time":"2026-11-30T03:43:13.123Z","node":"worker:1","level":"INFO","message":"..."}
// Only the JSON side lives here; reporting/log.cpp turns records into fields
// and back, so the one reader (parse_log_line) reads both formats.
#pragma once

#include <optional>
#include <string>

namespace downpour {

struct json_log_fields {
  std::string time, node, level, message;
};

// One whole line, newline included; the message escaped as JSON requires
// (bytes that are not UTF-8 become U+FFFD).
std::string format_log_json(const json_log_fields& f);

// The fields of one such line; nullopt for anything else.
std::optional<json_log_fields> parse_log_json(const std::string& line);

}  // namespace downpour
