// metrics.csv: written by the chief as the job runs (reporting/progress.hpp)
// and read by `downpour plot` (runtime/files/metrics_csv.cpp). Its columns and the form of
// a row are defined here once, for the writer and every reader (as LevelDB's
// db/log_format.h is for its log).
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>

namespace downpour {

// One row: one per metrics interval, and one per validation evaluation (the
// only rows with accuracies).
struct metrics_row {
  double wall_s = 0;  // seconds since the first run of the job started
  double global_step = 0;
  double loss = 0;
  double learning_rate = 0;
  double steps_per_s = 0;
  std::optional<double> val_accuracy;
  std::optional<double> ema_val_accuracy;
};

// The columns in the order written, indexed by metrics_column.
namespace metrics_column {
enum : std::size_t {
  wall_s,
  global_step,
  loss,
  learning_rate,
  steps_per_s,
  val_accuracy,
  ema_val_accuracy,
  count
};
}  // namespace metrics_column
inline constexpr std::array<const char*, metrics_column::count> metrics_columns = {
    "wall_s",      "global_step", "loss", "learning_rate", "steps_per_s",
    "val_accuracy", "ema_val_accuracy"};
// Every file has the first five; files written before evaluations existed
// lack the accuracies.
inline constexpr std::size_t metrics_required_columns = metrics_column::val_accuracy;

// The header line, without its newline: "wall_s,global_step,...".
std::string metrics_header();

// A row as written, without its newline: "12.345,1000,0.312,0.0099,81.50,,"
// (wall time to the millisecond, the step as an integer, six significant digits for loss
// and learning rate, the rate to 0.01, accuracies to 4 decimals or empty).
std::string metrics_line(const metrics_row& r);

}  // namespace downpour
