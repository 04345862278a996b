// Numbers read back from the logs of downpour processes. Every reader here
// splits lines with reporting/log.hpp's parse_log (the one reader of the line
// format) and looks at the message only; test_log feeds lines written by the
// logger through each of them, so a change of either format fails a test.
#pragma once

#include <cstdint>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "reporting/log.hpp"

namespace downpour::testing {

// A worker's "global_step:G,step:S,loss:L" line.
struct progress_line {
  std::int64_t global_step = 0, step = 0;
  double loss = 0;
};

inline std::optional<progress_line> progress_of(const log_record& r) {
  static const std::regex progress(R"(global_step:(\d+),step:(\d+),loss:(\S+))");
  std::smatch m;
  if (!std::regex_match(r.message, m, progress)) return std::nullopt;
  return progress_line{std::stoll(m[1]), std::stoll(m[2]), std::stod(m[3])};
}

// How many progress lines text (one process's output) holds.
inline std::size_t progress_lines(const std::string& text) {
  std::size_t n = 0;
  for (const auto& r : parse_log(text)) n += progress_of(r).has_value();
  return n;
}

// The global step of the newest progress line in text, -1 if none.
inline std::int64_t newest_progress_step(const std::string& text) {
  std::int64_t step = -1;
  for (const auto& r : parse_log(text))
    if (auto p = progress_of(r)) step = p->global_step;
  return step;
}

// The chief's "final: global_step=N loss=L test_accuracy=T ema_test_accuracy=E ..." line.
struct final_line_values {
  std::int64_t global_step = 0;
  double test_accuracy = 0, ema_test_accuracy = 0;
  std::string accuracies;  // "test_accuracy=T ema_test_accuracy=E" as printed
  std::optional<double> test_auc;  // a model predicting a probability: "test_auc=A"
  // "updates_applied=A updates_lost=L failover_pause_s=P"
  std::int64_t updates_applied = -1, updates_lost = -1;
  double failover_pause_s = -1;
};

inline std::optional<final_line_values> final_of(const std::string& text) {
  static const std::regex final_re(
      R"(final: global_step=(\d+) loss=\S+ (test_accuracy=(\S+) ema_test_accuracy=(\S+))( .*)?)");
  static const std::regex auc_re(R"( test_auc=(\S+))");
  static const std::regex counts_re(
      R"( updates_applied=(\d+) updates_lost=(\d+) failover_pause_s=(\S+))");
  for (const auto& r : parse_log(text)) {
    std::smatch m;
    if (!std::regex_match(r.message, m, final_re)) continue;
    final_line_values v{std::stoll(m[1]), std::stod(m[3]), std::stod(m[4]), m[2], std::nullopt};
    const std::string rest = m[5];
    std::smatch auc;
    if (std::regex_search(rest, auc, auc_re)) v.test_auc = std::stod(auc[1]);
    std::smatch counts;
    if (std::regex_search(rest, counts, counts_re)) {
      v.updates_applied = std::stoll(counts[1]);
      v.updates_lost = std::stoll(counts[2]);
      v.failover_pause_s = std::stod(counts[3]);
    }
    return v;
  }
  return std::nullopt;
}

// The chief's "eval: global_step=N val_accuracy=A ema_val_accuracy=E" lines, in order.
struct eval_line {
  std::int64_t global_step = 0;
  double val_accuracy = 0, ema_val_accuracy = 0;
};

inline std::vector<eval_line> eval_lines(const std::string& text) {
  static const std::regex eval_re(R"(eval: global_step=(\d+) val_accuracy=(\S+) ema_val_accuracy=(\S+))");
  std::vector<eval_line> out;
  for (const auto& r : parse_log(text)) {
    std::smatch m;
    if (std::regex_match(r.message, m, eval_re))
      out.push_back({std::stoll(m[1]), std::stod(m[2]), std::stod(m[3])});
  }
  return out;
}

// The step of the newest "checkpoint: saved DIR/model.ckpt-N" line in text, -1 if none.
inline std::int64_t newest_saved_step(const std::string& text) {
  static const std::regex saved(R"(checkpoint: saved \S*model\.ckpt-(\d+)( .*)?)");
  std::int64_t newest = -1;
  for (const auto& r : parse_log(text)) {
    std::smatch m;
    if (std::regex_match(r.message, m, saved)) newest = std::max<std::int64_t>(newest, std::stoll(m[1]));
  }
  return newest;
}

// The chief's "stop_supervisor: every shard restored; training resumes at
// global step R (rolled back from global step S)" lines (or "failed over to
// the backups; ...", without the part in parentheses when nothing was rolled
// back: S = R) and a shard's "parameter_shard K: restored to global step R
// (rolled back from global step S)" lines, in order.
struct rollback_line {
  std::int64_t restored = 0, reached = 0;
};

inline std::vector<rollback_line> rollback_lines(const std::string& text) {
  static const std::regex chief_re(
      R"(stop_supervisor: (?:every shard restored|failed over to the backups); training resumes )"
      R"(at global step (\d+)(?: \(rolled back from global step (\d+)\))?)");
  static const std::regex shard_re(
      R"(parameter_shard \d+: restored to global step (\d+) \(rolled back from global step (\d+)\))");
  std::vector<rollback_line> out;
  for (const auto& r : parse_log(text)) {
    std::smatch m;
    if (!std::regex_match(r.message, m, chief_re) && !std::regex_match(r.message, m, shard_re))
      continue;
    const auto restored = std::stoll(m[1]);
    out.push_back({restored, m[2].matched ? std::stoll(m[2]) : restored});
  }
  return out;
}

// S of the first "checkpoint: restored PATH at global step S" line, -1 if none.
inline std::int64_t restored_step(const std::string& text) {
  static const std::regex restored(R"(checkpoint: restored \S+ at global step (\d+))");
  for (const auto& r : parse_log(text)) {
    std::smatch m;
    if (std::regex_match(r.message, m, restored)) return std::stoll(m[1]);
  }
  return -1;
}

// The chief's "chief: failed over in T s; every shard is at global step S,
// O update(s) owed until their workers send them again, N lost (...)" line
// (--ps-replicas 2), if text holds one.
struct failover_line {
  double seconds = 0;
  std::int64_t step = 0, owed = 0, lost = 0;
};

// Every such line of text, in order.
inline std::vector<failover_line> failover_lines(const std::string& text) {
  static const std::regex failed_over(
      R"(chief: failed over in (\S+) s; every shard is at global step (\d+), (\d+) update\(s\) )"
      R"(owed until their workers send them again, (\d+) lost .*)");
  std::vector<failover_line> out;
  for (const auto& r : parse_log(text)) {
    std::smatch m;
    if (std::regex_match(r.message, m, failed_over))
      out.push_back(failover_line{std::stod(m[1]), std::stoll(m[2]), std::stoll(m[3]),
                                  std::stoll(m[4])});
  }
  return out;
}

inline std::optional<failover_line> failover_of(const std::string& text) {
  auto all = failover_lines(text);
  if (all.empty()) return std::nullopt;
  return all.front();
}

// An exchange's end line (--trainers K > 1): "exchange to shard K: M messages
// carried R trainer requests; row pulls asked for A keys, sent S after dedup
// (ratio X)", one per shard, in the order logged.
struct exchange_stats_line {
  std::size_t shard = 0;
  std::uint64_t messages = 0, requests = 0, keys_asked = 0, keys_sent = 0;
};

inline std::vector<exchange_stats_line> exchange_stats_of(const std::string& text) {
  static const std::regex stats(
      R"(exchange to shard (\d+): (\d+) messages carried (\d+) trainer requests; row pulls asked )"
      R"(for (\d+) keys, sent (\d+) after dedup \(ratio \S+\))");
  std::vector<exchange_stats_line> out;
  for (const auto& r : parse_log(text)) {
    std::smatch m;
    if (std::regex_match(r.message, m, stats))
      out.push_back({std::stoul(m[1]), std::stoull(m[2]), std::stoull(m[3]), std::stoull(m[4]),
                     std::stoull(m[5])});
  }
  return out;
}

// text's lines, without their line ends.
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The level of every log line of text, in order ("ERROR WARN INFO ").
inline std::string levels_in(const std::string& text) {
  std::string levels;
  for (const auto& r : parse_log(text)) levels += std::string(level_name(r.level)) + " ";
  return levels;
}

}  // namespace downpour::testing
