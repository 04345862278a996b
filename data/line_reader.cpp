#include "data/line_reader.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace downpour {
namespace {

constexpr std::size_t kInitialBuffer = std::size_t{1} << 20;
constexpr std::size_t kShownChars = 40;

}  // namespace

std::string shown_token(std::string_view token) {
  std::string out = "'";
  for (char c : token.substr(0, kShownChars)) {
    if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) {
      out += c;
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned char>(c));
      out += escaped;
    }
  }
  return out + (token.size() > kShownChars ? "...'" : "'");
}

line_reader::line_reader(byte_reader& in, std::size_t max_line_bytes)
    : in_(in), max_line_(max_line_bytes), buffer_(kInitialBuffer), buffer_offset_(in.offset()) {
  if (buffer_offset_ == 0) line_number_ = 0;
}

void line_reader::restart(std::uint64_t offset, line_start at) {
  const bool whole = at == line_start::yes || offset == 0;
  const std::uint64_t from = whole ? offset : offset - 1;
  in_.seek(from);
  buffer_offset_ = from;
  begin_ = end_ = 0;
  eof_ = false;
  line_number_.reset();
  if (offset == 0) line_number_ = 0;
  if (whole) return;
  // Drop everything through the first line end at or after `from`; the
  // line cut there is the block before's, however long it is.
  for (;;) {
    const auto* nl = static_cast<const char*>(std::memchr(buffer_.data() + begin_, '\n', end_ - begin_));
    if (nl) {
      begin_ = static_cast<std::size_t>(nl - buffer_.data()) + 1;
      return;
    }
    begin_ = end_;
    if (!refill()) return;
  }
}

// Keeps the unread bytes, moved to the front, and reads more after them;
// false at the end of the data.
bool line_reader::refill() {
  if (eof_) return false;
  std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
  buffer_offset_ += begin_;
  end_ -= begin_;
  begin_ = 0;
  if (end_ == buffer_.size()) buffer_.resize(std::min(2 * buffer_.size(), max_line_ + 2));
  const std::size_t got = in_.read(buffer_.data() + end_, buffer_.size() - end_);
  end_ += got;
  eof_ = got == 0;
  return !eof_;
}

std::optional<line_reader::line> line_reader::next() {
  for (;;) {
    const char* data = buffer_.data();
    const auto* nl = static_cast<const char*>(std::memchr(data + begin_, '\n', end_ - begin_));
    const std::size_t length = (nl ? static_cast<std::size_t>(nl - data) : end_) - begin_;
    if (length > max_line_) {
      // Counted as the line at hand, though never returned: the fault names it.
      if (line_number_) ++*line_number_;
      throw fault(line{std::string_view(), buffer_offset_ + begin_, 0}, {1, "line longer than " + std::to_string(max_line_) +
                              " bytes, the longest read (--max-line-bytes)"});
    }
    if (nl || (eof_ && begin_ != end_)) {
      const std::uint64_t offset = buffer_offset_ + begin_;
      begin_ += length + (nl ? 1 : 0);
      const line out{std::string_view(data + begin_ - length - (nl ? 1 : 0), length), offset,
                     buffer_offset_ + begin_};
      if (line_number_) ++*line_number_;
      return out;
    }
    if (!refill() && begin_ == end_) return std::nullopt;
  }
}

data_error line_reader::fault(const line& at, const line_fault& f) const {
  std::optional<std::uint64_t> number = line_number_;
  if (!number) number = line_number_at(in_.path(), at.offset);
  if (!number)
    return data_error("data: " + in_.path() + ": byte " + std::to_string(at.offset + f.column - 1) +
                      ": " + f.what);
  return data_error("data: " + in_.path() + ":" + std::to_string(*number) + ":" +
                    std::to_string(f.column) + ": " + f.what);
}

std::optional<std::uint64_t> line_number_at(const std::string& path, std::uint64_t offset) {
  try {
    byte_reader in(path, std::nullopt);
    std::vector<char> chunk(std::size_t{1} << 16);
    std::uint64_t lines = 1;
    while (in.offset() < offset) {
      const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), offset - in.offset()));
      const std::size_t got = in.read(chunk.data(), want);
      if (got == 0) return std::nullopt;
      lines += static_cast<std::uint64_t>(std::count(chunk.data(), chunk.data() + got, '\n'));
    }
    return lines;
  } catch (const data_error&) {
    return std::nullopt;
  }
}

}  // namespace downpour
