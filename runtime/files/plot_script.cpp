// The gnuplot script of the plot command: the metrics inline, three panels.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "runtime/files/plot.hpp"
#include "runtime/files/plot_detail.hpp"

namespace downpour {

namespace plot_detail {

std::string num(double v) {
  if (!std::isfinite(v)) return "?";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace plot_detail

namespace {

using plot_detail::has_accuracy;
using plot_detail::num;

constexpr std::size_t panel_width = 1000;
constexpr std::size_t panel_height = 330;

std::string safe_title(const std::string& text) {
  std::string s;
  for (char c : text) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '/' || c == '-';
    s += ok ? c : '?';
  }
  return s.size() > 120 ? "..." + s.substr(s.size() - 117) : s;
}

// Trailing moving average of the finite losses over window rows.
std::vector<double> smoothed_loss(const std::vector<metrics_row>& rows, std::size_t window) {
  std::vector<double> out(rows.size(), NAN);
  double sum = 0;
  std::size_t n = 0;
  std::vector<double> recent;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (std::isfinite(rows[i].loss)) {
      recent.push_back(rows[i].loss);
      sum += rows[i].loss;
      ++n;
      if (recent.size() > window) {
        sum -= recent[recent.size() - window - 1];
        --n;
      }
    }
    if (n > 0) out[i] = sum / static_cast<double>(n);
  }
  return out;
}

void plot_command(std::ostream& s, const std::vector<std::string>& elements) {
  s << "plot ";
  for (std::size_t i = 0; i < elements.size(); ++i) s << (i ? ", \\\n     " : "") << elements[i];
  s << "\n";
}

std::vector<metrics_row> sorted_by(std::vector<metrics_row> rows, double metrics_row::*key) {
  std::stable_sort(rows.begin(), rows.end(),
                   [key](const metrics_row& a, const metrics_row& b) { return a.*key < b.*key; });
  return rows;
}

// What the panels share: the rows in both orders and how they are drawn.
struct plot_plan {
  std::vector<metrics_row> by_step, by_wall;
  bool accuracy = false;
  std::size_t window = 1;
  bool smooth_it = false;  // many rows: light raw loss under its moving average
  std::string raw_colour;
  bool any_lr = false, any_rate = false;
};

plot_plan plan_for(const metrics_table& table) {
  plot_plan p;
  // Rows are drawn in the order of their x axis: a file may interleave rows
  // written at other moments (evaluations) with the training rows.
  p.by_step = sorted_by(table.rows, &metrics_row::global_step);
  p.by_wall = sorted_by(table.rows, &metrics_row::wall_s);
  p.accuracy = has_accuracy(table);
  p.window = std::max<std::size_t>(1, table.rows.size() / 25);
  p.smooth_it = p.window >= 2;
  p.raw_colour = p.smooth_it ? "#9ecae1" : "#08519c";
  p.any_lr = std::any_of(p.by_step.begin(), p.by_step.end(),
                         [](const metrics_row& r) { return std::isfinite(r.learning_rate); });
  p.any_rate = std::any_of(p.by_wall.begin(), p.by_wall.end(), [](const metrics_row& r) {
    return std::isfinite(r.steps_per_s) && r.steps_per_s > 0;
  });
  return p;
}

void data_blocks(std::ostream& s, const plot_plan& p) {
  s << "set datafile missing '?'\n";
  for (auto [name, rows] : {std::pair{"bystep", &p.by_step}, std::pair{"bywall", &p.by_wall}}) {
    const std::vector<double> smooth = smoothed_loss(*rows, p.window);
    s << "$" << name << " << EOD\n";
    for (std::size_t i = 0; i < rows->size(); ++i) {
      const auto& r = (*rows)[i];
      s << num(r.global_step) << ' ' << num(r.wall_s) << ' ' << num(r.loss) << ' ' << num(smooth[i])
        << ' ' << num(r.learning_rate) << ' ' << (r.steps_per_s > 0 ? num(r.steps_per_s) : "?")
        << '\n';  // no rate: no point
    }
    s << "EOD\n";
  }
  if (!p.accuracy) return;
  // One block per series, holding only the rows that have a value, so the
  // lines join the evaluations instead of breaking at every other row.
  for (auto [name, member] : {std::pair{"val", &metrics_row::val_accuracy},
                              std::pair{"ema", &metrics_row::ema_val_accuracy}}) {
    s << "$" << name << " << EOD\n";
    bool any = false;
    for (const auto& r : p.by_step) {
      const auto& v = r.*member;
      if (v && std::isfinite(*v)) {
        s << num(r.global_step) << ' ' << num(*v) << '\n';
        any = true;
      }
    }
    if (!any) s << "? ?\n";
    s << "EOD\n";
  }
}

void page_setup(std::ostream& s, const plot_plan& p, std::size_t rows,
                const std::string& title_hint) {
  const std::size_t panels = p.accuracy ? 3 : 2;
  const std::size_t width = panel_width, height = panel_height * panels;
  s << "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
    << "  set terminal pngcairo size " << width << "," << height
    << " noenhanced font 'sans,10' linewidth 1.2\n"
    << "} else {\n"
    << "  set terminal png size " << width << "," << height << " noenhanced\n"
    << "}\n"
    << "set encoding utf8\n"
    << "set grid\n"
    << "set key top right opaque\n"
    << "set tics out nomirror\n"
    << "set ytics nomirror\n";
  const metrics_row& last = p.by_step.back();
  char final_text[160];
  std::snprintf(final_text, sizeof final_text, "%zu row%s, last global_step %s, loss %s", rows,
                rows == 1 ? "" : "s", num(last.global_step).c_str(), num(last.loss).c_str());
  s << "set multiplot layout " << panels
    << ",1 title 'Downpour training: " << safe_title(title_hint) << " (" << final_text << ")'\n";
}

// Loss (and learning rate) against the global step.
void step_panel(std::ostream& s, const plot_plan& p) {
  s << "set title 'loss against global step'\n"
    << "set xlabel 'global step'\n"
    << "set ylabel 'loss'\n"
    << (p.any_lr ? "set y2label 'learning rate'\nset y2tics\nset format y2 '%.4g'\n" : "");
  std::vector<std::string> plots = {"$bystep using 1:3 with linespoints pt 7 ps 0.4 lc rgb '" +
                                    p.raw_colour + "' title 'loss'"};
  if (p.smooth_it)
    plots.push_back(
        "$bystep using 1:4 with lines lw 2 lc rgb '#08519c' title 'loss, moving average of " +
        std::to_string(p.window) + " rows'");
  if (p.any_lr)
    plots.push_back(
        "$bystep using 1:5 axes x1y2 with lines dt 2 lc rgb '#636363' title 'learning rate'");
  plot_command(s, plots);
  s << "unset y2tics\n"
    << "unset y2label\n";
}

void accuracy_panel(std::ostream& s) {
  s << "set title 'validation accuracy against global step'\n"
    << "set xlabel 'global step'\n"
    << "set ylabel 'accuracy'\n"
    << "set key bottom right\n";
  plot_command(s, {"$val using 1:2 with linespoints pt 7 ps 0.6 lc rgb '#e6550d' "
                   "title 'val_accuracy'",
                   "$ema using 1:2 with linespoints pt 5 ps 0.6 lc rgb '#31a354' "
                   "title 'ema_val_accuracy'"});
  s << "set key top right\n";
}

// Loss (and throughput) against wall time.
void wall_panel(std::ostream& s, const plot_plan& p) {
  s << "set title 'loss against wall time'\n"
    << "set xlabel 'wall time (s)'\n"
    << "set ylabel 'loss'\n";
  std::vector<std::string> plots = {"$bywall using 2:3 with linespoints pt 7 ps 0.4 lc rgb '" +
                                    p.raw_colour + "' title 'loss'"};
  if (p.smooth_it)
    plots.push_back(
        "$bywall using 2:4 with lines lw 2 lc rgb '#08519c' title 'loss, moving average'");
  if (p.any_rate) {
    s << "set y2label 'steps/s'\n"
      << "set y2tics\n"
      << "set format y2 '%.4g'\n";
    plots.push_back(
        "$bywall using 2:6 axes x1y2 with lines dt 3 lc rgb '#756bb1' title 'steps/s'");
  }
  plot_command(s, plots);
}

}  // namespace

std::string plot_script(const metrics_table& table, const std::string& title_hint) {
  const plot_plan p = plan_for(table);
  std::ostringstream s;
  data_blocks(s, p);
  page_setup(s, p, table.rows.size(), title_hint);
  step_panel(s, p);
  if (p.accuracy) accuracy_panel(s);
  wall_panel(s, p);
  s << "unset multiplot\n";
  return s.str();
}

}  // namespace downpour
