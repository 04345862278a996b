// Opening what an operator names as input (a config file, a data file, a
// checkpoint) so that the name cannot make a reader block or swallow memory:
// a FIFO would block open() and read() until a writer comes, a device
// (/dev/zero) never ends. Only regular files are read; the caller gets their
// size before it reads or allocates anything, so sizes a header claims can
// be checked against the file. The lowest layer: config/ and data/ both read
// through it, and runtime/files reads checkpoints through it.
#pragma once

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace downpour {

// A file that cannot be read as input; what() is "PATH: REASON", reason()
// the REASON alone ("is a FIFO, not a regular file", "cannot open: ...") for
// callers that word the path themselves. Callers turn it into their own
// error (config_error, data_error, checkpoint_error).
class input_error : public std::runtime_error {
 public:
  input_error(const std::string& path, const std::string& reason)
      : std::runtime_error(path + ": " + reason), reason_(reason) {}
  const std::string& reason() const { return reason_; }

 private:
  std::string reason_;
};

inline constexpr std::uint64_t no_size_limit = std::numeric_limits<std::uint64_t>::max();

// An open regular file. The path is looked at first (stat: a FIFO or device
// is refused without being opened), then opened with O_NONBLOCK, so that a
// FIFO put in its place between the two cannot block, and the descriptor is
// checked again (fstat): what is read is what was checked.
class input_file {
 public:
  // Throws input_error: cannot open, not a regular file (naming what it is),
  // or more than max_bytes long.
  explicit input_file(const std::string& path, std::uint64_t max_bytes = no_size_limit);
  ~input_file();
  input_file(input_file&& other) noexcept;
  input_file& operator=(input_file&&) = delete;
  input_file(const input_file&) = delete;
  input_file& operator=(const input_file&) = delete;

  const std::string& path() const { return path_; }
  std::uint64_t size() const { return size_; }  // at open (fstat)
  int fd() const { return fd_; }
  // Hands the descriptor over (to fdopen, gzdopen); it is no longer closed here.
  int release();
  // Exactly n bytes from offset; throws input_error when the file ends before
  // (it shrank) or a read fails.
  std::string read_at(std::uint64_t offset, std::size_t n) const;

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

// The whole of a small file (a config file, the checkpoint index): refused,
// before anything is read, when it is longer than max_bytes, and cut off
// there should it grow while being read. Throws input_error.
std::string read_input(const std::string& path, std::uint64_t max_bytes);

}  // namespace downpour
