#include "reporting/progress.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <optional>
#include <unistd.h>

#include "reporting/metrics_schema.hpp"
#include "config/durations.hpp"

namespace downpour {

namespace {

// The metrics written before a restore: an unfinished last row (a kill
// while writing it) is cut off; returns the wall time of the last whole
// row, or nullopt when there is no file to continue.
std::optional<double> continue_metrics(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  const auto end = text.rfind('\n');
  if (end == std::string::npos) return std::nullopt;
  std::filesystem::resize_file(p, end + 1);
  const auto begin = text.rfind('\n', end - 1);
  const auto row = text.substr(begin == std::string::npos ? 0 : begin + 1, end);
  char* parsed = nullptr;
  const double wall = std::strtod(row.c_str(), &parsed);
  return parsed == row.c_str() ? 0.0 : wall;  // the header only
}

}  // namespace

progress_reporter::progress_reporter(progress_config cfg)
    : cfg_(std::move(cfg)), start_(std::chrono::steady_clock::now()),
      last_row_step_(cfg_.start_step), tty_(::isatty(STDERR_FILENO) != 0) {
  if (cfg_.metrics_path.empty()) return;
  std::filesystem::path p(cfg_.metrics_path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
  const auto before = cfg_.resumed ? continue_metrics(p) : std::nullopt;
  csv_ = std::make_unique<std::ofstream>(p, before ? std::ios::app : std::ios::trunc);
  if (before)
    wall_offset_ = *before;
  else
    *csv_ << metrics_header() << '\n';
}

void progress_reporter::on_step(std::int64_t global_step, float loss) {
  last_loss_ = loss;
  double now = seconds_since(start_);
  if (csv_ && global_step % cfg_.metrics_every == 0) write_row(global_step, loss, now);
  if (!cfg_.quiet && now - last_print_s_ >= cfg_.print_every_s) {
    print_status(global_step, loss, now, false);
    last_print_s_ = now;
  }
}

void progress_reporter::finish(std::int64_t global_step) {
  double now = seconds_since(start_);
  if (csv_) {
    write_row(global_step, last_loss_, now);
    csv_->flush();
  }
  if (!cfg_.quiet) print_status(global_step, last_loss_, now, true);
}

void progress_reporter::on_eval(std::int64_t global_step, double accuracy, double ema_accuracy) {
  double now = seconds_since(start_);
  if (csv_) write_eval_row(global_step, now, accuracy, ema_accuracy);
  char line[128];
  std::snprintf(line, sizeof line, "eval: global_step=%lld val_accuracy=%.4f ema_val_accuracy=%.4f",
                static_cast<long long>(global_step), accuracy, ema_accuracy);
  cfg_.log.info(line);
}

double progress_reporter::steps_per_s(std::int64_t global_step) const {
  double now = seconds_since(start_);
  return now > 0 ? static_cast<double>(global_step - cfg_.start_step) / now : 0.0;
}

// Evaluations finish after later steps were logged: their rate is the
// average since the start, and they leave the step-to-step rate alone.
void progress_reporter::write_eval_row(std::int64_t global_step, double now_s, double accuracy,
                                       double ema_accuracy) {
  metrics_row row{wall_offset_ + now_s,
                  static_cast<double>(global_step),
                  last_loss_,
                  learning_rate_at(cfg_.schedule, global_step),
                  steps_per_s(global_step),
                  accuracy,
                  ema_accuracy};
  *csv_ << metrics_line(row) << '\n';
  csv_->flush();
}

void progress_reporter::write_row(std::int64_t global_step, float loss, double now_s) {
  double dt = now_s - last_row_s_;
  double rate = dt > 0 ? static_cast<double>(global_step - last_row_step_) / dt : 0.0;
  metrics_row row{wall_offset_ + now_s, static_cast<double>(global_step), loss,
                  learning_rate_at(cfg_.schedule, global_step), rate, std::nullopt, std::nullopt};
  *csv_ << metrics_line(row) << '\n';
  csv_->flush();
  last_row_s_ = now_s;
  last_row_step_ = global_step;
}

void progress_reporter::print_status(std::int64_t global_step, float loss, double now_s,
                                     bool last) {
  double done = static_cast<double>(global_step - cfg_.start_step);
  double rate = now_s > 0 ? done / now_s : 0.0;
  double eta = rate > 0 ? static_cast<double>(cfg_.last_step - global_step) / rate : 0.0;
  char buf[200];
  std::snprintf(buf, sizeof buf, "progress: global_step %lld/%lld  %.1f steps/s  loss %.4f  ETA %.0fs",
                static_cast<long long>(global_step), static_cast<long long>(cfg_.last_step), rate,
                loss, eta);
  if (!cfg_.log.enabled(log_level::info)) return;
  // On a terminal, one line redrawn in place (not a log line); otherwise a
  // log line like any other.
  if (tty_)
    std::fprintf(stderr, "\r%s\x1b[K%s", buf, last ? "\n" : "");
  else
    cfg_.log.info(buf);
}

}  // namespace downpour
