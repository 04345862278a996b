#include "data/libsvm.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

#include "io/input_file.hpp"

namespace downpour {
namespace {

// Big enough that a read costs little per line; a longer line grows it.
constexpr std::size_t kInitialBuffer = std::size_t{1} << 22;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }

const char* skip_space(const char* p, const char* end) {
  while (p != end && is_space(*p)) ++p;
  return p;
}

const char* token_end(const char* p, const char* end) {
  while (p != end && !is_space(*p)) ++p;
  return p;
}

std::string quoted(const char* begin, const char* end) {
  return "'" + std::string(begin, end) + "'";
}

// -1 and 0 read as 0, +1 as 1 (in any float spelling: "1.0" too).
std::optional<std::uint8_t> parse_label(const char* begin, const char* end) {
  if (begin != end && *begin == '+') ++begin;
  double x = 0;
  const auto [ptr, ec] = std::from_chars(begin, end, x);
  if (ec != std::errc{} || ptr != end) return std::nullopt;
  if (x == 1.0) return 1;
  if (x == 0.0 || x == -1.0) return 0;
  return std::nullopt;
}

// A finite float (a leading '+' allowed), or nothing.
std::optional<float> parse_value(const char* begin, const char* end) {
  if (begin != end && *begin == '+') ++begin;
  float value = 0;
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc{} || ptr != end || begin == end || !std::isfinite(value))
    return std::nullopt;
  return value;
}

// Why parse_value refused the text of the value of index key.
std::string value_fault(const char* begin, const char* end, std::uint64_t key) {
  const std::string value = quoted(begin, end) + " for index " + std::to_string(key);
  if (begin != end && *begin == '+') ++begin;
  float x = 0;
  const auto [ptr, ec] = std::from_chars(begin, end, x);
  if (ec == std::errc::result_out_of_range) return "value " + value + " is out of float range";
  if (ec != std::errc{} || ptr != end || begin == end)
    return "bad value " + value + " (expected a float)";
  return "value " + value + " is not finite";
}

// Why the index:value token at p (which from_chars did not read up to its
// colon) is malformed.
std::string index_fault(const char* p, const char* end) {
  const char* token = token_end(p, end);
  const auto* colon =
      static_cast<const char*>(std::memchr(p, ':', static_cast<std::size_t>(token - p)));
  if (!colon) return "missing ':' in " + quoted(p, token) + " (expected index:value)";
  return "bad index " + quoted(p, colon) + " (expected an integer from 0 to " +
         std::to_string(std::numeric_limits<std::uint64_t>::max()) + ")";
}

}  // namespace

libsvm_reader::libsvm_reader(std::string path)
    : path_(std::move(path)), file_(nullptr, &std::fclose), buffer_(kInitialBuffer) {
  try {
    input_file file(path_);  // a regular file: a FIFO or a device is refused, never waited on
    errno = 0;
    file_.reset(::fdopen(file.fd(), "rb"));
    if (file_) file.release();
  } catch (const input_error& e) {
    throw data_error(std::string("data: ") + e.what());
  }
  if (!file_)
    throw data_error("data: " + path_ + ": cannot open: " +
                     (errno ? std::strerror(errno) : "unknown error"));
  refill();
  if (end_ >= 2 && static_cast<unsigned char>(buffer_[0]) == 0x1f &&
      static_cast<unsigned char>(buffer_[1]) == 0x8b)
    throw data_error("data: " + path_ +
                     ": is gzip-compressed; libsvm files are read uncompressed (gunzip it first)");
}

libsvm_reader::~libsvm_reader() = default;

// Moves the unparsed tail to the front and reads more after it; false at
// the end of the file.
bool libsvm_reader::refill() {
  std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
  end_ -= begin_;
  begin_ = 0;
  if (end_ == buffer_.size()) buffer_.resize(2 * buffer_.size());
  const std::size_t got = std::fread(buffer_.data() + end_, 1, buffer_.size() - end_, file_.get());
  if (got == 0 && std::ferror(file_.get()))
    throw data_error("data: " + path_ + ": read error after line " + std::to_string(line_) +
                     ": " + std::strerror(errno));
  end_ += got;
  eof_ = got == 0;
  return !eof_;
}

sparse_examples libsvm_reader::next(std::size_t max_examples) {
  block_ = sparse_examples{};
  while (block_.size() < max_examples) {
    const char* data = buffer_.data();
    const auto* newline =
        static_cast<const char*>(std::memchr(data + begin_, '\n', end_ - begin_));
    if (newline) {
      ++line_;
      parse_line(data + begin_, newline);
      begin_ = static_cast<std::size_t>(newline - data) + 1;
    } else if (!eof_) {
      refill();
    } else if (begin_ != end_) {  // a last line without a newline
      ++line_;
      parse_line(data + begin_, data + end_);
      begin_ = end_;
    } else {
      break;
    }
  }
  return std::exchange(block_, sparse_examples{});
}

// Appends the example of the line [begin, end) to block_, if it holds one.
void libsvm_reader::parse_line(const char* begin, const char* end) {
  if (const void* hash = std::memchr(begin, '#', static_cast<std::size_t>(end - begin)))
    end = static_cast<const char*>(hash);
  const auto fail = [&](const char* at, const std::string& what) {
    throw data_error("data: " + path_ + ":" + std::to_string(line_) + ":" +
                     std::to_string(at - begin + 1) + ": " + what);
  };
  const char* p = skip_space(begin, end);
  if (p == end) return;
  const char* token = token_end(p, end);
  const auto label = parse_label(p, token);
  if (!label) fail(p, "bad label " + quoted(p, token) + " (expected 0 or 1, or -1 or +1)");
  const std::size_t first = block_.keys.size();
  for (p = skip_space(token, end); p != end; p = skip_space(token, end)) {
    // The index is read up to the colon in one pass; only a bad one is
    // looked at again, to say what is wrong with it.
    std::uint64_t key = 0;
    const auto [colon, ec] = std::from_chars(p, end, key);
    if (ec != std::errc{} || colon == end || *colon != ':') fail(p, index_fault(p, end));
    if (block_.keys.size() > first && key <= block_.keys.back())
      fail(p, (key == block_.keys.back() ? "duplicate index " + std::to_string(key)
                                      : "index " + std::to_string(key) + " after index " +
                                            std::to_string(block_.keys.back())) +
                  " (indices must ascend within a line)");
    const char* v = colon + 1;
    token = token_end(v, end);
    // The common binary feature skips the float parser.
    const auto value = token - v == 1 && *v == '1' ? 1.0f : parse_value(v, token);
    if (!value) fail(v, value_fault(v, token, key));
    block_.keys.push_back(key);
    block_.values.push_back(*value);
  }
  block_.close_example(*label);
}

sparse_examples load_libsvm(const std::string& path) {
  libsvm_reader reader(path);
  sparse_examples set = reader.next(std::numeric_limits<std::size_t>::max());
  if (set.size() == 0) throw data_error("data: " + path + ": contains no examples");
  return set;
}

std::string libsvm_text(const sparse_examples& set) {
  std::string text;
  text.reserve(set.size() * 4 + set.nonzeros() * 12);
  char number[64];
  for (std::size_t i = 0; i < set.size(); ++i) {
    text += set.labels[i] ? '1' : '0';
    for (std::uint64_t j = set.offsets[i]; j < set.offsets[i + 1]; ++j) {
      text += ' ';
      text.append(number, std::to_chars(number, number + sizeof number, set.keys[j]).ptr);
      text += ':';
      const float v = set.values[j];
      if (v == 1.0f) {
        text += '1';
      } else {
        text.append(number, std::to_chars(number, number + sizeof number, v).ptr);
      }
    }
    text += '\n';
  }
  return text;
}

}  // namespace downpour
