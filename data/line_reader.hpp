// The lines of a data file with their byte offsets, read through a buffer
// that never holds more than the longest line allowed: a file of any size,
// and a line of any length, cost at most that much memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "data/byte_reader.hpp"

namespace downpour {

// The longest line read by default (--max-line-bytes): about 100,000
// libsvm features. A longer one is refused, naming its file and line.
inline constexpr std::size_t default_max_line_bytes = std::size_t{1} << 20;

// A line that holds no valid example, as a parser reports it: the 1-based
// byte column where the fault is, and what it is. The reader adds where
// the line is (line_reader::fault).
struct line_fault {
  std::size_t column = 1;
  std::string what;
};

// A token of a bad line as an error message shows it: quoted, cut to 40
// characters ("..." after), control bytes escaped. A 100 MB token costs 40.
std::string shown_token(std::string_view token);

// Whether an offset is known to start a line.
enum class line_start { yes, unknown };

class line_reader {
 public:
  struct line {
    std::string_view text;  // without its '\n' (a '\r' before it stays)
    std::uint64_t offset;   // of its first byte, uncompressed
    std::uint64_t next;     // of the byte after its '\n' (where the next line starts)
  };

  line_reader(byte_reader& in, std::size_t max_line_bytes);

  // Continues at offset. line_start::yes: offset starts a line; unknown:
  // the line that offset falls into is skipped (it belongs to the block
  // before) unless the byte before offset ends a line.
  void restart(std::uint64_t offset, line_start at);

  // The next line, valid until the next call; nullopt at the end of the
  // data. Throws data_error for a line over the limit ("FILE:LINE: ...").
  std::optional<line> next();

  // "data: FILE:LINE:COLUMN: what" for a fault in the line last returned;
  // "data: FILE: byte N: what" when its line number cannot be known (a
  // file changed since).
  data_error fault(const line& at, const line_fault& f) const;

 private:
  bool refill();

  byte_reader& in_;
  std::size_t max_line_;
  std::vector<char> buffer_;
  std::size_t begin_ = 0;  // unread bytes are buffer_[begin_, end_)
  std::size_t end_ = 0;
  std::uint64_t buffer_offset_ = 0;  // file offset of buffer_[0]
  bool eof_ = false;
  // Lines returned since a restart at offset 0 (then the line numbers are
  // known without counting again), or nullopt.
  std::optional<std::uint64_t> line_number_;
};

// The 1-based number of the line that starts at offset, counted by reading
// the file again (only an error message needs it); nullopt if the file
// cannot be read that far.
std::optional<std::uint64_t> line_number_at(const std::string& path, std::uint64_t offset);

}  // namespace downpour
