// Reading and validating metrics.csv (reporting/metrics_schema.hpp) for the plot
// command.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>

#include "io/input_file.hpp"
#include "runtime/files/plot.hpp"
#include "runtime/files/plot_detail.hpp"

namespace downpour {

namespace plot_detail {

[[noreturn]] void fail(const std::string& what) {
  throw plot_error("plot: " + what);
}

std::string shown(const std::string& text, std::size_t limit) {
  std::string s = text.size() > limit ? text.substr(0, limit) + "..." : text;
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return s;
}

bool has_accuracy(const metrics_table& t) {
  return std::any_of(t.rows.begin(), t.rows.end(), [](const metrics_row& r) {
    return (r.val_accuracy && std::isfinite(*r.val_accuracy)) ||
           (r.ema_val_accuracy && std::isfinite(*r.ema_val_accuracy));
  });
}

}  // namespace plot_detail

namespace {

namespace fs = std::filesystem;
using plot_detail::fail;
using plot_detail::shown;

// "wall_s,...,steps_per_s[,val_accuracy,ema_val_accuracy]"
std::string expected_header() {
  std::string text;
  for (std::size_t c = 0; c < metrics_columns.size(); ++c)
    text += std::string(c == 0 ? "" : c == metrics_required_columns ? "[," : ",") +
            metrics_columns[c];
  return text + "]";
}

std::string at_line(const std::string& path, std::size_t line) {
  return path + ":" + std::to_string(line);
}

std::vector<std::string> split_fields(const std::string& line) {
  std::vector<std::string> fields;
  std::size_t start = 0;
  for (;;) {
    std::size_t comma = line.find(',', start);
    std::string f =
        line.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    auto first = f.find_first_not_of(" \t");
    auto last = f.find_last_not_of(" \t");
    fields.push_back(first == std::string::npos ? "" : f.substr(first, last - first + 1));
    if (comma == std::string::npos) return fields;
    start = comma + 1;
  }
}

bool parse_number(const std::string& text, double& value) {
  if (text.empty()) return false;
  const char* begin = text.c_str();
  char* end = nullptr;
  errno = 0;
  value = std::strtod(begin, &end);
  return end == begin + text.size() && errno != ERANGE;
}

// Where each of metrics_columns is in the file (the required ones always are).
struct column_map {
  std::size_t count = 0;
  std::array<std::optional<std::size_t>, metrics_column::count> at;
};

column_map read_header(const std::string& header, const std::string& path) {
  std::vector<std::string> names = split_fields(header);
  column_map map;
  map.count = names.size();
  auto index_of = [&](const std::string& name) -> std::optional<std::size_t> {
    std::optional<std::size_t> found;
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (names[i] != name) continue;
      if (found)
        fail(at_line(path, 1) + ": header names column '" + name + "' twice (expected " +
             expected_header() + ")");
      found = i;
    }
    return found;
  };
  for (std::size_t c = 0; c < metrics_columns.size(); ++c) {
    map.at[c] = index_of(metrics_columns[c]);
    if (c < metrics_required_columns && !map.at[c])
      fail(at_line(path, 1) + ": header '" + shown(header, 160) + "' lacks column '" +
           metrics_columns[c] + "' (expected " + expected_header() + ")");
  }
  return map;
}

// Parses one data row; returns an error text (without the file:line prefix)
// or an empty string.
std::string parse_row(const std::string& line, const column_map& map, metrics_row& row) {
  std::vector<std::string> fields = split_fields(line);
  if (fields.size() != map.count)
    return std::to_string(fields.size()) + " field" + (fields.size() == 1 ? "" : "s") +
           " but the header has " + std::to_string(map.count);
  auto number = [&](std::size_t column, double& value) -> std::string {
    const std::size_t i = *map.at[column];
    const char* name = metrics_columns[column];
    if (fields[i].empty()) return std::string(name) + " is empty (expected a number)";
    if (!parse_number(fields[i], value))
      return std::string(name) + " '" + shown(fields[i]) + "' is not a number";
    return "";
  };
  auto optional_number = [&](std::size_t column, std::optional<double>& value) -> std::string {
    const auto& i = map.at[column];
    const char* name = metrics_columns[column];
    if (!i || fields[*i].empty()) return "";
    double v = 0;
    if (!parse_number(fields[*i], v))
      return std::string(name) + " '" + shown(fields[*i]) +
             "' is not a number (expected a number or nothing)";
    value = v;
    return "";
  };
  // The axes must be finite; a loss, rate or learning rate may be nan or inf
  // (a diverged run) and is then left out of its line.
  auto axis = [&](std::size_t column, double& value) -> std::string {
    std::string why = number(column, value);
    if (why.empty() && !std::isfinite(value))
      why = std::string(metrics_columns[column]) + " '" + shown(fields[*map.at[column]]) +
            "' is not a finite number";
    return why;
  };
  namespace col = metrics_column;
  std::string why;
  if (!(why = axis(col::wall_s, row.wall_s)).empty()) return why;
  if (!(why = axis(col::global_step, row.global_step)).empty()) return why;
  if (!(why = number(col::loss, row.loss)).empty()) return why;
  if (!(why = number(col::learning_rate, row.learning_rate)).empty()) return why;
  if (!(why = number(col::steps_per_s, row.steps_per_s)).empty()) return why;
  if (!(why = optional_number(col::val_accuracy, row.val_accuracy)).empty()) return why;
  return optional_number(col::ema_val_accuracy, row.ema_val_accuracy);
}

// A regular file only (io/input_file.hpp): a FIFO or a device given as
// --metrics is refused, never waited on.
std::string read_whole(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) fail(path + ": is a directory (expected a metrics.csv file)");
  try {
    const input_file file(path);
    return file.read_at(0, static_cast<std::size_t>(file.size()));
  } catch (const input_error& e) {
    const std::string open_prefix = "cannot open: ";
    const std::string& why = e.reason();
    fail(path + ": cannot read (" +
         (why.rfind(open_prefix, 0) == 0 ? why.substr(open_prefix.size()) : why) + ")");
  }
}

}  // namespace

metrics_table read_metrics(const std::string& path, std::ostream& warnings) {
  const std::string text = read_whole(path);
  if (text.empty()) fail(path + ": empty file (expected the header " + expected_header() + ")");
  metrics_table table;
  column_map map;
  std::size_t line_no = 0;
  std::size_t pos = 0;
  bool header_seen = false;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    bool terminated = nl != std::string::npos;
    std::string line = text.substr(pos, terminated ? nl - pos : std::string::npos);
    pos = terminated ? nl + 1 : text.size();
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!header_seen) {
      if (line_no == 1 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);
      map = read_header(line, path);
      table.has_accuracy_columns =
          map.at[metrics_column::val_accuracy] || map.at[metrics_column::ema_val_accuracy];
      header_seen = true;
      continue;
    }
    if (line.find_first_not_of(" \t") == std::string::npos) continue;  // blank line
    metrics_row row;
    std::string why = parse_row(line, map, row);
    if (why.empty()) {
      table.rows.push_back(row);
    } else if (!terminated) {
      warnings << "downpour: plot: " << at_line(path, line_no)
               << ": ignoring the unfinished last line (" << why
               << "; is the run still writing it?)" << std::endl;
    } else {
      fail(at_line(path, line_no) + ": " + why);
    }
  }
  if (table.rows.empty()) fail(path + ": no data rows after the header");
  if (std::none_of(table.rows.begin(), table.rows.end(),
                   [](const metrics_row& r) { return std::isfinite(r.loss); }))
    fail(path + ": no finite loss value to draw");
  return table;
}

}  // namespace downpour
