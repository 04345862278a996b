// downpour plot: draws a run's metrics.csv as a PNG with gnuplot.
//   downpour plot [--metrics FILE | --checkpoint-dir DIR] --out FILE.png
// Panels, top to bottom: loss (and its moving average, with the learning rate on
// the right axis) against the global step; validation accuracy, raw and EMA,
// against the global step (only when the file has those columns and at least one
// row with a value); loss (with steps/s on the right axis) against wall time.
//
// The CSV is validated first (header columns, field counts, every number), and
// the numbers are handed to gnuplot inline in its script, so no path ever
// appears in gnuplot's command language. gnuplot runs as a child process (no
// shell) with the script on stdin and its PNG on stdout, which is a temporary
// file next to --out; that file is checked to be a PNG, fsynced and renamed over
// --out, so --out is either the old file or the whole new plot.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "reporting/metrics_schema.hpp"
#include "config/options.hpp"

namespace downpour {

// A problem with the metrics file, gnuplot or the output; what() is one line
// naming the file (and the line of the file, for bad content).
struct plot_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct metrics_table {
  std::vector<metrics_row> rows;
  bool has_accuracy_columns = false;  // the header names val_accuracy/ema_val_accuracy
};

// Reads and validates a metrics.csv; throws plot_error naming path (and line).
// An unterminated last line that does not parse (a run still writing it) is
// skipped with a warning on warnings.
metrics_table read_metrics(const std::string& path, std::ostream& warnings);

// The gnuplot script (data inline) that draws table to stdout as a PNG.
// title_hint names the data in the title; characters other than letters,
// digits and ._/- are shown as '?'.
std::string plot_script(const metrics_table& table, const std::string& title_hint);

// The plot command: exit code 0, or throws (config_error: no --out; plot_error).
int run_plot(const options& opts, std::ostream& out, std::ostream& err);

}  // namespace downpour
