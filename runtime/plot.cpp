#include "runtime/plot.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>

extern char** environ;

namespace downpour {

const char* const metrics_required_columns = "wall_s,global_step,loss,learning_rate,steps_per_s";

namespace {

namespace fs = std::filesystem;

constexpr const char* optional_columns = "val_accuracy,ema_val_accuracy";
constexpr std::size_t panel_width = 1000;
constexpr std::size_t panel_height = 330;

std::string expected_header() {
  return std::string(metrics_required_columns) + "[," + optional_columns + "]";
}

[[noreturn]] void fail(const std::string& what) {
  throw plot_error("plot: " + what);
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

// Shown text of a bad field or header: bounded, control characters as '?'.
std::string shown(const std::string& text, std::size_t limit = 40) {
  std::string s = text.size() > limit ? text.substr(0, limit) + "..." : text;
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return s;
}

bool parse_number(const std::string& text, double& value) {
  if (text.empty()) return false;
  const char* begin = text.c_str();
  char* end = nullptr;
  errno = 0;
  value = std::strtod(begin, &end);
  return end == begin + text.size() && errno != ERANGE;
}

struct column_map {
  std::size_t count = 0;
  std::size_t wall_s, global_step, loss, learning_rate, steps_per_s;
  std::optional<std::size_t> val_accuracy, ema_val_accuracy;
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
  auto required = [&](const std::string& name) {
    auto i = index_of(name);
    if (!i)
      fail(at_line(path, 1) + ": header '" + shown(header, 160) + "' lacks column '" + name +
           "' (expected " + expected_header() + ")");
    return *i;
  };
  map.wall_s = required("wall_s");
  map.global_step = required("global_step");
  map.loss = required("loss");
  map.learning_rate = required("learning_rate");
  map.steps_per_s = required("steps_per_s");
  map.val_accuracy = index_of("val_accuracy");
  map.ema_val_accuracy = index_of("ema_val_accuracy");
  return map;
}

// Parses one data row; returns an error text (without the file:line prefix)
// or an empty string.
std::string parse_row(const std::string& line, const column_map& map, metrics_row& row) {
  std::vector<std::string> fields = split_fields(line);
  if (fields.size() != map.count)
    return std::to_string(fields.size()) + " field" + (fields.size() == 1 ? "" : "s") +
           " but the header has " + std::to_string(map.count);
  auto number = [&](std::size_t i, const char* name, double& value) -> std::string {
    if (fields[i].empty()) return std::string(name) + " is empty (expected a number)";
    if (!parse_number(fields[i], value))
      return std::string(name) + " '" + shown(fields[i]) + "' is not a number";
    return "";
  };
  auto optional_number = [&](const std::optional<std::size_t>& i, const char* name,
                             std::optional<double>& value) -> std::string {
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
  auto axis = [&](std::size_t i, const char* name, double& value) -> std::string {
    std::string why = number(i, name, value);
    if (why.empty() && !std::isfinite(value))
      why = std::string(name) + " '" + shown(fields[i]) + "' is not a finite number";
    return why;
  };
  std::string why;
  if (!(why = axis(map.wall_s, "wall_s", row.wall_s)).empty()) return why;
  if (!(why = axis(map.global_step, "global_step", row.global_step)).empty()) return why;
  if (!(why = number(map.loss, "loss", row.loss)).empty()) return why;
  if (!(why = number(map.learning_rate, "learning_rate", row.learning_rate)).empty()) return why;
  if (!(why = number(map.steps_per_s, "steps_per_s", row.steps_per_s)).empty()) return why;
  if (!(why = optional_number(map.val_accuracy, "val_accuracy", row.val_accuracy)).empty())
    return why;
  return optional_number(map.ema_val_accuracy, "ema_val_accuracy", row.ema_val_accuracy);
}

std::string read_whole(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) fail(path + ": is a directory (expected a metrics.csv file)");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path + ": cannot read (" + std::strerror(errno) + ")");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) fail(path + ": cannot read (" + std::strerror(errno) + ")");
  return text.str();
}

// Numbers for gnuplot's inline data: '?' (declared missing) for NaN and inf.
std::string num(double v) {
  if (!std::isfinite(v)) return "?";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string safe_title(const std::string& text) {
  std::string s;
  for (char c : text) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '/' || c == '-';
    s += ok ? c : '?';
  }
  return s.size() > 120 ? "..." + s.substr(s.size() - 117) : s;
}

bool has_accuracy(const metrics_table& t) {
  return std::any_of(t.rows.begin(), t.rows.end(), [](const metrics_row& r) {
    return (r.val_accuracy && std::isfinite(*r.val_accuracy)) ||
           (r.ema_val_accuracy && std::isfinite(*r.ema_val_accuracy));
  });
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

// ---- the child process -------------------------------------------------------

struct fd_guard {
  int fd = -1;
  explicit fd_guard(int f) : fd(f) {}
  fd_guard(const fd_guard&) = delete;
  fd_guard& operator=(const fd_guard&) = delete;
  ~fd_guard() {
    if (fd >= 0) ::close(fd);
  }
};

// An anonymous temporary file (created and unlinked at once).
int anonymous_file() {
  std::string pattern = (fs::temp_directory_path() / "downpour-plot-XXXXXX").string();
  int fd = ::mkostemp(pattern.data(), O_CLOEXEC);
  if (fd < 0)
    fail(std::string("cannot create a temporary file in ") + fs::temp_directory_path().string() +
         " (" + std::strerror(errno) + ")");
  ::unlink(pattern.c_str());
  return fd;
}

void write_all(int fd, const std::string& bytes, const std::string& what) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("cannot write " + what + " (" + std::strerror(errno) + ")");
    done += static_cast<std::size_t>(n);
  }
}

std::string read_all(int fd) {
  std::string text;
  char buf[4096];
  ::lseek(fd, 0, SEEK_SET);
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return text;
    text.append(buf, static_cast<std::size_t>(n));
  }
}

// gnuplot's error: its last message line that is not a warning (else its last
// line), trimmed to one bounded line.
std::string last_message(const std::string& text) {
  std::istringstream in(text);
  std::string line, last, last_error;
  while (std::getline(in, line)) {
    auto first = line.find_first_not_of(" \t\r^");
    if (first == std::string::npos) continue;
    last = line.substr(first);
    if (last.rfind("Warning:", 0) != 0 && last.rfind("warning:", 0) != 0) last_error = last;
  }
  if (!last_error.empty()) return shown(last_error, 200);
  return last.empty() ? "no message" : shown(last, 200);
}

// Runs gnuplot with script on stdin and its stdout into out_fd.
void run_gnuplot(const std::string& script, int out_fd) {
  fd_guard script_fd(anonymous_file());
  write_all(script_fd.fd, script, "the gnuplot script");
  ::lseek(script_fd.fd, 0, SEEK_SET);
  fd_guard err_fd(anonymous_file());

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, script_fd.fd, 0);
  posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err_fd.fd, 2);
  // -d: no personal or system initialization file changes what we draw.
  char arg0[] = "gnuplot";
  char arg1[] = "-d";
  char* argv[] = {arg0, arg1, nullptr};
  pid_t pid = -1;
  int rc = ::posix_spawnp(&pid, "gnuplot", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc == ENOENT)
    fail(
        "gnuplot not found on PATH (install it: apt-get install gnuplot-nox, or "
        "scripts/install-deps)");
  if (rc != 0) fail(std::string("cannot start gnuplot (") + std::strerror(rc) + ")");
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      fail(std::string("waiting for gnuplot failed (") + std::strerror(errno) + ")");
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
  std::string how = WIFEXITED(status) ? "exit code " + std::to_string(WEXITSTATUS(status))
                                      : "signal " + std::to_string(WTERMSIG(status));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
    fail("gnuplot could not be run (" + how + "): " + last_message(read_all(err_fd.fd)));
  fail("gnuplot failed (" + how + "): " + last_message(read_all(err_fd.fd)));
}

struct png_size {
  std::uint32_t width = 0, height = 0;
};

std::uint32_t big_endian(const unsigned char* p) {
  return (std::uint32_t(p[0]) << 24) | (std::uint32_t(p[1]) << 16) | (std::uint32_t(p[2]) << 8) |
         std::uint32_t(p[3]);
}

// Width and height from the IHDR chunk, or nullopt if the bytes are no PNG.
std::optional<png_size> png_dimensions(int fd) {
  unsigned char head[24];
  if (::pread(fd, head, sizeof head, 0) != static_cast<ssize_t>(sizeof head)) return std::nullopt;
  static const unsigned char signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (std::memcmp(head, signature, 8) != 0 || std::memcmp(head + 12, "IHDR", 4) != 0)
    return std::nullopt;
  return png_size{big_endian(head + 16), big_endian(head + 20)};
}

void sync_directory(const fs::path& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
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
      table.has_accuracy_columns = map.val_accuracy || map.ema_val_accuracy;
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

namespace {

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

}  // namespace

std::string plot_script(const metrics_table& table, const std::string& title_hint) {
  // Rows are drawn in the order of their x axis: a file may interleave rows
  // written at other moments (evaluations) with the training rows.
  const auto by_step = sorted_by(table.rows, &metrics_row::global_step);
  const auto by_wall = sorted_by(table.rows, &metrics_row::wall_s);
  const bool accuracy = has_accuracy(table);
  const std::size_t panels = accuracy ? 3 : 2;
  const std::size_t window = std::max<std::size_t>(1, table.rows.size() / 25);
  // Few rows: the raw loss alone, in a strong colour; many: light, under its average.
  const bool smooth_it = window >= 2;
  const char* raw_colour = smooth_it ? "#9ecae1" : "#08519c";
  const metrics_row& last = by_step.back();
  const bool any_lr = std::any_of(by_step.begin(), by_step.end(), [](const metrics_row& r) {
    return std::isfinite(r.learning_rate);
  });
  const bool any_rate = std::any_of(by_wall.begin(), by_wall.end(), [](const metrics_row& r) {
    return std::isfinite(r.steps_per_s) && r.steps_per_s > 0;
  });

  std::ostringstream s;
  s << "set datafile missing '?'\n";
  for (auto [name, rows] : {std::pair{"bystep", &by_step}, std::pair{"bywall", &by_wall}}) {
    const std::vector<double> smooth = smoothed_loss(*rows, window);
    s << "$" << name << " << EOD\n";
    for (std::size_t i = 0; i < rows->size(); ++i) {
      const auto& r = (*rows)[i];
      s << num(r.global_step) << ' ' << num(r.wall_s) << ' ' << num(r.loss) << ' ' << num(smooth[i])
        << ' ' << num(r.learning_rate) << ' ' << (r.steps_per_s > 0 ? num(r.steps_per_s) : "?")
        << '\n';  // no rate: no point
    }
    s << "EOD\n";
  }
  if (accuracy) {
    // One block per series, holding only the rows that have a value, so the
    // lines join the evaluations instead of breaking at every other row.
    for (auto [name, member] : {std::pair{"val", &metrics_row::val_accuracy},
                                std::pair{"ema", &metrics_row::ema_val_accuracy}}) {
      s << "$" << name << " << EOD\n";
      bool any = false;
      for (const auto& r : by_step) {
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
  char final_text[160];
  std::snprintf(final_text, sizeof final_text, "%zu row%s, last global_step %s, loss %s",
                table.rows.size(), table.rows.size() == 1 ? "" : "s", num(last.global_step).c_str(),
                num(last.loss).c_str());
  s << "set multiplot layout " << panels
    << ",1 title 'Downpour training: " << safe_title(title_hint) << " (" << final_text << ")'\n";

  // Loss (and learning rate) against the global step.
  s << "set title 'loss against global step'\n"
    << "set xlabel 'global step'\n"
    << "set ylabel 'loss'\n"
    << (any_lr ? "set y2label 'learning rate'\nset y2tics\nset format y2 '%.4g'\n" : "");
  std::vector<std::string> step_plot = {"$bystep using 1:3 with linespoints pt 7 ps 0.4 lc rgb '" +
                                        std::string(raw_colour) + "' title 'loss'"};
  if (smooth_it)
    step_plot.push_back(
        "$bystep using 1:4 with lines lw 2 lc rgb '#08519c' title 'loss, moving average of " +
        std::to_string(window) + " rows'");
  if (any_lr)
    step_plot.push_back(
        "$bystep using 1:5 axes x1y2 with lines dt 2 lc rgb '#636363' title 'learning rate'");
  plot_command(s, step_plot);
  s << "unset y2tics\n"
    << "unset y2label\n";

  if (accuracy) {
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
  s << "set title 'loss against wall time'\n"
    << "set xlabel 'wall time (s)'\n"
    << "set ylabel 'loss'\n";
  std::vector<std::string> wall_plot = {"$bywall using 2:3 with linespoints pt 7 ps 0.4 lc rgb '" +
                                        std::string(raw_colour) + "' title 'loss'"};
  if (smooth_it)
    wall_plot.push_back(
        "$bywall using 2:4 with lines lw 2 lc rgb '#08519c' title 'loss, moving average'");
  if (any_rate) {
    s << "set y2label 'steps/s'\n"
      << "set y2tics\n"
      << "set format y2 '%.4g'\n";
    wall_plot.push_back(
        "$bywall using 2:6 axes x1y2 with lines dt 3 lc rgb '#756bb1' title 'steps/s'");
  }
  plot_command(s, wall_plot);
  s << "unset multiplot\n";
  return s.str();
}

int run_plot(const options& opts, std::ostream& out, std::ostream& err) {
  if (opts.out_file.empty()) throw config_error("plot: --out FILE is required (the PNG to write)");
  const std::string metrics = opts.metrics_file.empty()
                                  ? (fs::path(opts.checkpoint_dir) / "metrics.csv").string()
                                  : opts.metrics_file;
  const metrics_table table = read_metrics(metrics, err);
  const std::string script = plot_script(table, metrics);

  const fs::path target(opts.out_file);
  std::error_code ec;
  if (fs::is_directory(target, ec)) fail(opts.out_file + ": is a directory (expected a .png file)");
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  fs::create_directories(dir, ec);
  std::string tmp = (dir / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
  int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0)
    fail("cannot create a temporary file in " + dir.string() + " (" + std::strerror(errno) + ")");
  fd_guard tmp_fd(fd);
  try {
    run_gnuplot(script, tmp_fd.fd);
    auto size = png_dimensions(tmp_fd.fd);
    if (!size) fail("gnuplot did not write a PNG image (is its png terminal missing?)");
    mode_t mask = ::umask(0);
    ::umask(mask);
    ::fchmod(tmp_fd.fd, 0666 & ~mask);
    if (::fsync(tmp_fd.fd) != 0)
      fail("cannot write " + opts.out_file + " (" + std::strerror(errno) + ")");
    if (::rename(tmp.c_str(), target.c_str()) != 0)
      fail("cannot write " + opts.out_file + " (" + std::strerror(errno) + ")");
    sync_directory(dir);
    auto [first, last] = std::minmax_element(
        table.rows.begin(), table.rows.end(),
        [](const metrics_row& a, const metrics_row& b) { return a.global_step < b.global_step; });
    out << "plot: wrote " << opts.out_file << " (" << size->width << "x" << size->height << " PNG, "
        << table.rows.size() << (table.rows.size() == 1 ? " row of " : " rows of ") << metrics
        << ", global_step " << num(first->global_step) << " to " << num(last->global_step)
        << (has_accuracy(table) ? ", with validation accuracy" : "") << ")" << std::endl;
    return 0;
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
}

}  // namespace downpour
