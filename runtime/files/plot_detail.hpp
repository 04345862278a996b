// Internal to the plot command (metrics_csv.cpp, plot_script.cpp, plot.cpp):
// helpers the reading, the script and the drawing share.
#pragma once

#include <cstddef>
#include <string>

namespace downpour {
struct metrics_table;  // runtime/files/plot.hpp, which does not need this file
}  // namespace downpour

namespace downpour::plot_detail {

// Throws plot_error("plot: " + what).
[[noreturn]] void fail(const std::string& what);

// Shown text of a bad field or header: bounded, control characters as '?'.
std::string shown(const std::string& text, std::size_t limit = 40);

// Numbers for gnuplot's inline data: '?' (declared missing) for NaN and inf.
std::string num(double v);

// At least one row has a finite validation accuracy.
bool has_accuracy(const metrics_table& t);

}  // namespace downpour::plot_detail
