#include "runtime/files/durable_write.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <utility>

namespace downpour {
namespace {

namespace fs = std::filesystem;

// Reads errno before anything else can change it.
[[noreturn]] void fail(const std::string& path, const char* what, const std::string& detail = "") {
  const int err = errno;
  throw durable_write_error(path + ": " + what + detail + ": " + std::strerror(err));
}

class unique_fd {
 public:
  explicit unique_fd(int fd) : fd_(fd) {}
  unique_fd(const unique_fd&) = delete;
  unique_fd& operator=(const unique_fd&) = delete;
  ~unique_fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

void notify(const write_observer& observe, write_stage stage) {
  if (observe) observe(stage);
}

std::string temp_name(const std::string& name) {
  char suffix[48];
  std::snprintf(suffix, sizeof suffix, ".tmp.%ld.%08x", static_cast<long>(::getpid()),
                static_cast<unsigned>(std::random_device{}()));
  return "." + name + suffix;
}

void write_all(int fd, const char* data, std::size_t size, const std::string& path) {
  for (std::size_t done = 0; done < size;) {
    ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(path, "cannot write");
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace

void sync_directory(const std::string& dir) {
  unique_fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0 || ::fsync(fd.get()) != 0) fail(dir, "cannot sync the directory");
}

void write_durably_from(const std::string& path, const std::function<void(int fd)>& fill,
                        const write_observer& observe) {
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(dir, ec);
  const fs::path tmp = dir / temp_name(target.filename().string());
  unique_fd fd(::open(tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666));
  if (fd.get() < 0) fail(path, "cannot create the temporary ", tmp.string());
  try {
    fill(fd.get());
    if (::fsync(fd.get()) != 0 || ::close(fd.release()) != 0) fail(path, "cannot sync");
    notify(observe, write_stage::synced);
    if (::rename(tmp.c_str(), target.c_str()) != 0) fail(path, "cannot rename the temporary");
  } catch (...) {
    fs::remove(tmp, ec);
    throw;
  }
  notify(observe, write_stage::renamed);
  sync_directory(dir.string());
  notify(observe, write_stage::directory_synced);
}

void write_durably(const std::string& path, const std::string& bytes,
                   const write_observer& observe) {
  write_durably_from(
      path,
      [&](int fd) {
        for (std::size_t done = 0; done < bytes.size(); done += write_chunk_bytes) {
          write_all(fd, bytes.data() + done, std::min(write_chunk_bytes, bytes.size() - done),
                    path);
          notify(observe, write_stage::chunk_written);
        }
      },
      observe);
}

void remove_dead_temporaries(const std::string& dir,
                             const std::function<bool(const std::string&)>& ours) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    auto name = entry.path().filename().string();
    auto tmp = name.find(".tmp.");
    if (name[0] != '.' || tmp == std::string::npos || !ours(name.substr(1, tmp - 1))) continue;
    long pid = std::strtol(name.c_str() + tmp + 5, nullptr, 10);
    if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
      fs::remove(entry.path(), ec);
  }
}

}  // namespace downpour
