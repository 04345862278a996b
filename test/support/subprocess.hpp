// Starting downpour processes from tests. Output goes through a pipe into a
// buffer (and a log file), so a test can wait for a line to appear; waits are
// event-driven, and their timeouts are only failure bounds, so they are
// scaled() (longer in instrumented builds, test/support/time_bounds.hpp).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "time_bounds.hpp"

namespace downpour::testing {

// A whole (small) file as text, "" if it cannot be read.
inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

class process {
 public:
  process(const std::vector<std::string>& args, const std::string& output_path)
      : log_(output_path, std::ios::trunc), command_(join(args)) {
    // Everything the child needs is built before fork: it may not allocate.
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe() failed");
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(fds[1], 1);
      ::dup2(fds[1], 2);
      ::close(fds[0]);
      ::close(fds[1]);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(fds[1]);
    reader_ = std::thread([this, fd = fds[0]] { read_output(fd); });
    // wait4 also reports the child's peak resident set and CPU time (for the benchmarks).
    exit_ = std::async(std::launch::async, [this] {
      int status = 0;
      struct rusage usage {};
      ::wait4(pid_, &status, 0, &usage);
      peak_rss_kb_ = usage.ru_maxrss;
      cpu_us_ = (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000000L +
                usage.ru_utime.tv_usec + usage.ru_stime.tv_usec;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    });
  }
  process(const process&) = delete;
  process& operator=(const process&) = delete;
  ~process() {
    if (exit_.valid() && exit_.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
      kill(SIGKILL);
    if (exit_.valid()) exit_.wait();
    if (reader_.joinable()) reader_.join();
  }

  // The exit code (128 + signal if killed), or -1 if still running after
  // scaled(timeout) (it is then killed).
  int wait(std::chrono::seconds timeout) {
    if (exit_.wait_for(scaled(timeout)) != std::future_status::ready) {
      kill(SIGKILL);
      exit_.wait();
      code_ = -1;
    } else if (exit_.valid()) {
      code_ = exit_.get();
    }
    if (reader_.joinable()) reader_.join();
    return code_;
  }

  // True once text has appeared in the output, false after scaled(timeout).
  bool wait_for_output(const std::string& text, std::chrono::seconds timeout) {
    return wait_until([&](const std::string& out) { return out.find(text) != std::string::npos; },
                      timeout);
  }

  // True once ready(output so far) holds (checked whenever output arrives;
  // log_lines.hpp reads numbers from it), false once the output has closed
  // without it or after scaled(timeout).
  template <class Ready>
  bool wait_until(Ready ready, std::chrono::seconds timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, scaled(timeout), [&] { return ready(output_) || closed_; }) &&
           ready(output_);
  }

  // The child's peak resident set size in KiB (ru_maxrss); 0 until it has exited.
  long peak_rss_kb() const { return peak_rss_kb_; }
  // The child's user + system CPU time in seconds; 0 until it has exited.
  double cpu_s() const { return static_cast<double>(cpu_us_) / 1e6; }

  void kill(int sig) { ::kill(pid_, sig); }
  pid_t pid() const { return pid_; }
  std::string output() {
    std::lock_guard<std::mutex> lock(mutex_);
    return output_;
  }

 private:
  void read_output(int fd) {
    char buf[4096];
    for (;;) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) break;
      std::lock_guard<std::mutex> lock(mutex_);
      output_.append(buf, static_cast<std::size_t>(n));
      log_.write(buf, n);
      log_.flush();
      changed_.notify_all();
    }
    ::close(fd);
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
    keep_sanitizer_report();
    changed_.notify_all();
  }

  // scripts/sanitize-tests sets DOWNPOUR_SANITIZER_LOG: a child's sanitizer
  // report is appended there, so that it fails the run even when the test
  // does not look at that child's exit code (or expects it to fail).
  void keep_sanitizer_report() const {
    const char* path = std::getenv("DOWNPOUR_SANITIZER_LOG");
    if (!path || !*path) return;
    for (const char* marker : {"ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                               ": runtime error: ", "SUMMARY: UndefinedBehaviorSanitizer"})
      if (output_.find(marker) != std::string::npos) {
        std::ofstream(path, std::ios::app)
            << "---- " << command_ << " (pid " << pid_ << ")\n" << output_ << "\n";
        return;
      }
  }

  static std::string join(const std::vector<std::string>& args) {
    std::string out;
    for (const auto& a : args) out += (out.empty() ? "" : " ") + a;
    return out;
  }

  pid_t pid_ = -1;
  int code_ = -1;
  std::atomic<long> peak_rss_kb_{0};
  std::atomic<long> cpu_us_{0};
  std::ofstream log_;
  std::string command_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::string output_;
  bool closed_ = false;
  std::thread reader_;
  std::future<int> exit_;
};

// A fresh directory under the system temp dir, removed when the test ends.
class temp_dir {
 public:
  explicit temp_dir(const std::string& tag) {
    path_ = std::filesystem::temp_directory_path() /
            ("downpour-" + tag + "-" + std::to_string(::getpid()) + "-" +
             std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
    std::filesystem::create_directories(path_);
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string str() const { return path_.string(); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// Runs the binary with stdout to the process buffer and stderr to a file.
struct split_run {
  int code;
  std::string out, err;
};

inline split_run run_split(const std::vector<std::string>& args, const temp_dir& dir,
                    const std::string& tag) {
  std::string command = "exec";
  for (const auto& a : args) command += " '" + a + "'";
  command += " 2>'" + dir / (tag + ".err") + "'";
  process p({"/bin/sh", "-c", command}, dir / (tag + ".out"));
  int code = p.wait(std::chrono::seconds(120));
  return {code, p.output(), read_text(dir / (tag + ".err"))};
}

}  // namespace downpour::testing
