// The plot command: gnuplot as a child process, its PNG checked and renamed
// into place.
#include "runtime/files/plot.hpp"

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

#include "runtime/files/plot_detail.hpp"

extern char** environ;

namespace downpour {

namespace {

namespace fs = std::filesystem;
using plot_detail::fail;
using plot_detail::has_accuracy;
using plot_detail::num;
using plot_detail::shown;

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
