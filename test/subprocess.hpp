// Starting downpour processes from tests: output to a file, waiting with a
// timeout that is only a failure bound (waitpid blocks on the exit event).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <vector>

namespace downpour::testing {

class process {
 public:
  process(const std::vector<std::string>& args, const std::string& output_path)
      : output_path_(output_path) {
    // Everything the child needs is built before fork: it may not allocate.
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      int fd = ::open(output_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    exit_ = std::async(std::launch::async, [pid = pid_] {
      int status = 0;
      ::waitpid(pid, &status, 0);
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    });
  }
  process(const process&) = delete;
  process& operator=(const process&) = delete;
  ~process() {
    if (exit_.valid() && exit_.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
      kill(SIGKILL);
    if (exit_.valid()) exit_.wait();
  }

  // The exit code, or -1 if the process is still running after timeout (it is
  // then killed).
  int wait(std::chrono::seconds timeout) {
    if (exit_.wait_for(timeout) != std::future_status::ready) {
      kill(SIGKILL);
      exit_.wait();
      return -1;
    }
    return exit_.get();
  }
  void kill(int sig) { ::kill(pid_, sig); }
  pid_t pid() const { return pid_; }
  std::string output() const {
    std::ifstream in(output_path_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

 private:
  pid_t pid_ = -1;
  std::string output_path_;
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

}  // namespace downpour::testing
