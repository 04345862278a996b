#include "io/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <utility>

namespace downpour {
namespace {

// What a path names when it is not a regular file, as an error says it.
const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "no file";
}

void check_regular(const std::string& path, const struct stat& st) {
  if (!S_ISREG(st.st_mode))
    throw input_error(path, std::string("is ") + kind_of(st.st_mode) + ", not a regular file");
}

[[noreturn]] void fail_errno(const std::string& path, const char* what) {
  throw input_error(path, std::string(what) + ": " + std::strerror(errno));
}

}  // namespace

input_file::input_file(const std::string& path, std::uint64_t max_bytes) : path_(path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) fail_errno(path, "cannot open");
  check_regular(path, st);
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd_ < 0) fail_errno(path, "cannot open");
  try {
    if (::fstat(fd_, &st) != 0) fail_errno(path, "cannot open");
    check_regular(path, st);
    size_ = static_cast<std::uint64_t>(st.st_size);
    if (size_ > max_bytes)
      throw input_error(path, "is " + std::to_string(size_) + " bytes, more than the " +
                                  std::to_string(max_bytes) + " allowed");
    // A regular file never blocks; readers that wrap the descriptor expect
    // ordinary blocking reads.
    const int flags = ::fcntl(fd_, F_GETFL);
    if (flags >= 0) ::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK);
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

input_file::~input_file() {
  if (fd_ >= 0) ::close(fd_);
}

input_file::input_file(input_file&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)), size_(other.size_) {}

int input_file::release() { return std::exchange(fd_, -1); }

std::string input_file::read_at(std::uint64_t offset, std::size_t n) const {
  std::string bytes;
  try {
    bytes.resize(n);
  } catch (const std::bad_alloc&) {
    throw input_error(path_, "cannot hold " + std::to_string(n) + " bytes of it in memory");
  }
  for (std::size_t done = 0; done < n;) {
    const ssize_t got = ::pread(fd_, bytes.data() + done, n - done,
                                static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail_errno(path_, "cannot read");
    if (got == 0)
      throw input_error(path_, "ended after " + std::to_string(offset + done) + " of " +
                                   std::to_string(offset + n) + " bytes (did it shrink?)");
    done += static_cast<std::size_t>(got);
  }
  return bytes;
}

std::string read_input(const std::string& path, std::uint64_t max_bytes) {
  const input_file file(path, max_bytes);
  return file.read_at(0, static_cast<std::size_t>(file.size()));
}

}  // namespace downpour
