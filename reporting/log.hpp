// Log lines of every node in one format:
//   2026-11-30T03:43:13.123Z worker:1 INFO global_step:120,step:60,loss:0.53
// (UTC time with milliseconds, the node as role:task, the level, the text).
// Errors and warnings go to stderr, the rest to stdout; lines below the
// --log-level threshold are dropped.
//
// A logger is a small value (node name, threshold, two streams) copied into
// every config that logs, so there is no global logger to set up or to race
// on. Each line is written with one fwrite and flushed; stdio locks a stream
// for the whole call, so lines of concurrent actors never interleave.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "config/options.hpp"

namespace downpour {

// "ERROR", "WARN", "INFO", "DEBUG".
const char* level_name(log_level level);

// "2026-11-30T03:43:13.123Z" (UTC, milliseconds).
std::string utc_timestamp(std::chrono::system_clock::time_point t);

// The longest message a log line carries, in bytes after escaping; a longer
// one is cut there and marked with log_cut_mark (docs/operations.md#logs).
inline constexpr std::size_t max_log_message_bytes = 4096;
inline constexpr const char* log_cut_mark = " [cut at 4096 bytes]";

// text as one printable line of at most max_log_message_bytes (plus the
// mark): control characters (C0 with tab and newline, DEL, C1), the Unicode
// line and paragraph separators, bidirectional embeddings, overrides and
// isolates (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C) and bytes
// that are not UTF-8 are escaped as \xHH (bytes) or \uXXXX (characters),
// so a file or a peer cannot forge lines or reorder what a terminal shows.
// Every line written goes through it (format_log_line, format_json_log_line),
// and so do the few lines written before a logger exists (runtime/cli/app.cpp).
std::string printable_line(const std::string& text);

// One whole line, newline included; the message through printable_line.
std::string format_log_line(std::chrono::system_clock::time_point t, const std::string& node,
                            log_level level, const std::string& message);

// The same fields as one JSON object, newline included (--log-format=json,
// reporting/log_json.hpp); the message through printable_line as well, so
// both formats carry the same bounded text.
std::string format_json_log_line(std::chrono::system_clock::time_point t, const std::string& node,
                                 log_level level, const std::string& message);

// One line taken apart again: the only reader of the format, used by
// everything that scrapes logs (the tests' helpers, the chaos tool), so a
// change of format_log_line breaks a test that feeds its output back here.
struct log_record {
  std::string time;  // "2026-11-30T03:43:13.123Z"
  std::string node;  // "worker:1"
  log_level level = log_level::info;
  std::string message;
};

// The record of one line (a trailing newline allowed), of either format
// (--log-format text or json); nullopt for text that is not a log line (a
// child's stray output, a partly written line).
std::optional<log_record> parse_log_line(const std::string& line);

// The records of every complete log line in text (a process's whole output),
// in order; other lines are skipped.
std::vector<log_record> parse_log(const std::string& text);

// The original program's progress line: "global_step:G,step:S,loss:L".
std::string step_log_line(std::int64_t global_step, std::int64_t step, float loss);

// "worker:1", "ps:0"; the chief is worker:0.
std::string node_name(role_kind role, std::size_t task);

class logger {
 public:
  logger() = default;  // node "downpour", level info, stdout and stderr
  logger(std::string node, log_level threshold,
         log_format_kind format = log_format_kind::text);
  // Tests write to files of their own.
  logger(std::string node, log_level threshold, std::FILE* out, std::FILE* err);

  bool enabled(log_level level) const { return level <= threshold_; }
  void write(log_level level, const std::string& message) const;
  void error(const std::string& message) const { write(log_level::error, message); }
  void warn(const std::string& message) const { write(log_level::warn, message); }
  void info(const std::string& message) const { write(log_level::info, message); }
  void debug(const std::string& message) const { write(log_level::debug, message); }

  const std::string& node() const { return node_; }
  log_level threshold() const { return threshold_; }
  // The same threshold and streams for another node of this process.
  logger for_node(std::string node) const;

 private:
  std::string node_ = "downpour";
  log_level threshold_ = log_level::info;
  log_format_kind format_ = log_format_kind::text;
  std::FILE* out_ = stdout;
  std::FILE* err_ = stderr;
};

// This process's logger for a node of the job.
logger node_logger(const options& opts, role_kind role, std::size_t task);

// Refusals a stranger can repeat at will (retrying every 50 ms) are logged
// once per interval and kind: the first one at once, later ones counted and
// the count added to the next line of that kind logged after the interval.
// Kinds are a few fixed words chosen by the caller. Thread-safe.
class log_throttle {
 public:
  explicit log_throttle(std::chrono::steady_clock::duration interval);
  // nullopt: stay silent; otherwise what to append to the line: "" or
  // " (and N more like it in the last 10 s)".
  std::optional<std::string> pass(const std::string& kind);

 private:
  struct seen {
    std::chrono::steady_clock::time_point last;
    std::uint64_t suppressed = 0;
  };
  std::chrono::steady_clock::duration interval_;
  std::mutex mutex_;
  std::map<std::string, seen> kinds_;
};

// An ostream whose every line becomes one log line at the given level, for
// code that reports through a stream (checkpoint warnings, the reference
// trainer's progress).
class log_stream : public std::ostream {
 public:
  log_stream(logger log, log_level level);
  ~log_stream() override;

 private:
  class line_buffer;
  std::unique_ptr<line_buffer> buffer_;
};

// v with `digits` decimals ("%.*f"): how log lines and command output print
// seconds and accuracies.
std::string fixed_text(double v, int digits);

}  // namespace downpour
