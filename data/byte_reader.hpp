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
#include "io/input_file.hpp"

namespace downpour {

// A data file opened through io/input_file.hpp, the one way input files are
// opened: a regular file only (a FIFO, a device or a directory is refused by
// what it is, never waited on). Throws data_error "data: FILE: REASON".
input_file open_data_file(const std::string& path);

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
  std::optional<input_file> file_;
  std::unique_ptr<inflater> gzip_;
  std::uint64_t offset_ = 0;  // uncompressed
};

}  // namespace downpour
