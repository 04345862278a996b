// The chief's view of a running job: a live status line on a terminal (plain
// periodic lines otherwise) and metrics.csv written as the job runs.
#pragma once

#include <chrono>
#include <cstdint>
#include <fstream>
#include <memory>
#include <string>

#include "reporting/log.hpp"
#include "model/schedule.hpp"

namespace downpour {

struct progress_config {
  std::string metrics_path;  // empty: no metrics.csv
  lr_schedule schedule;
  std::int64_t start_step = 0;
  std::int64_t last_step = 0;
  std::int64_t metrics_every = 100;  // global steps between metrics rows
  double print_every_s = 1.0;        // seconds between status lines
  bool quiet = false;                // no status lines (tests)
  // Restored from a checkpoint: metrics.csv is appended to (header once),
  // its wall time continuing from the last row of the runs before.
  bool resumed = false;
  logger log;                        // the chief: eval lines, status lines off a terminal
};

class progress_reporter {
 public:
  explicit progress_reporter(progress_config cfg);
  // Called once per global step handed out, with the latest worker loss.
  void on_step(std::int64_t global_step, float loss);
  void finish(std::int64_t global_step);
  // A validation evaluation: a metrics row with its accuracies.
  void on_eval(std::int64_t global_step, double accuracy, double ema_accuracy);
  // Global steps per second since the start.
  double steps_per_s(std::int64_t global_step) const;

 private:
  void write_row(std::int64_t global_step, float loss, double now_s);
  void write_eval_row(std::int64_t global_step, double now_s, double accuracy,
                      double ema_accuracy);
  void print_status(std::int64_t global_step, float loss, double now_s, bool last);

  progress_config cfg_;
  std::chrono::steady_clock::time_point start_;
  std::unique_ptr<std::ofstream> csv_;
  double wall_offset_ = 0.0;  // resumed: the wall time of the runs before
  double last_print_s_ = 0.0;
  double last_row_s_ = 0.0;
  std::int64_t last_row_step_ = 0;
  float last_loss_ = 0.0f;
  bool tty_ = false;
};

}  // namespace downpour
