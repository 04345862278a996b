// A data file read as bytes: plain, or gzip (told by its magic bytes, any
// number of members, streamed through zlib) with offsets counted in the
// uncompressed bytes. The line readers (data/line_reader.hpp) sit on top.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "data/dataset.hpp"

namespace downpour {

// An open file descriptor, closed with its owner.
class file_handle {
 public:
  file_handle() = default;
  explicit file_handle(int fd) : fd_(fd) {}
  ~file_handle();
  file_handle(file_handle&& other) noexcept : fd_(other.release()) {}
  file_handle& operator=(file_handle&& other) noexcept;
  int get() const { return fd_; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

// The one place a data file is opened: a regular file only (a FIFO, a
// device or a directory is refused by name). Throws data_error
// "data: FILE: cannot open: REASON".
file_handle open_data_file(const std::string& path);

// The file's size in bytes; throws data_error naming it.
std::uint64_t data_file_size(const std::string& path);

// True when the file starts with gzip's magic bytes 1f 8b.
bool is_gzip_file(const std::string& path);

class byte_reader {
 public:
  // expected_size: the file's size when the job planned its reading; a
  // file found shorter (it shrank or was replaced) is refused where it ends.
  // Throws data_error.
  byte_reader(std::string path, std::optional<std::uint64_t> expected_size);
  ~byte_reader();
  byte_reader(const byte_reader&) = delete;
  byte_reader& operator=(const byte_reader&) = delete;

  // Up to n bytes from offset(); 0 at the end of the data. Throws
  // data_error "data: FILE: byte N: ..." for a read error, a truncated or
  // corrupt gzip stream, or a file shorter than expected.
  std::size_t read(char* out, std::size_t n);

  // Moves to an uncompressed offset: a plain file seeks, a gzip stream
  // reads on (or again from its start) and drops the bytes before it.
  void seek(std::uint64_t offset);

  std::uint64_t offset() const { return offset_; }
  bool gzip() const { return gzip_ != nullptr; }
  const std::string& path() const { return path_; }

 private:
  class inflater;
  std::size_t read_plain(char* out, std::size_t n);
  void open();

  std::string path_;
  std::optional<std::uint64_t> expected_size_;
  file_handle file_;
  std::unique_ptr<inflater> gzip_;
  std::uint64_t offset_ = 0;  // uncompressed
};

}  // namespace downpour
