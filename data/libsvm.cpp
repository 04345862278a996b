#include "data/libsvm.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

namespace downpour {
namespace {

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
  return shown_token(std::string_view(begin, static_cast<std::size_t>(end - begin)));
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

std::optional<std::uint8_t> parse_libsvm_line(std::string_view line,
                                              std::vector<std::uint64_t>& keys,
                                              std::vector<float>& values) {
  const char* begin = line.data();
  const char* end = begin + line.size();
  if (const void* hash = std::memchr(begin, '#', line.size())) end = static_cast<const char*>(hash);
  const auto fail = [&](const char* at, std::string what) {
    throw line_fault{static_cast<std::size_t>(at - begin) + 1, std::move(what)};
  };
  const char* p = skip_space(begin, end);
  if (p == end) return std::nullopt;
  const char* token = token_end(p, end);
  const auto label = parse_label(p, token);
  if (!label) fail(p, "bad label " + quoted(p, token) + " (expected 0 or 1, or -1 or +1)");
  const std::size_t first = keys.size();
  for (p = skip_space(token, end); p != end; p = skip_space(token, end)) {
    // The index is read up to the colon in one pass; only a bad one is
    // looked at again, to say what is wrong with it.
    std::uint64_t key = 0;
    const auto [colon, ec] = std::from_chars(p, end, key);
    if (ec != std::errc{} || colon == end || *colon != ':') fail(p, index_fault(p, end));
    if (keys.size() > first && key <= keys.back())
      fail(p, (key == keys.back() ? "duplicate index " + std::to_string(key)
                                  : "index " + std::to_string(key) + " after index " +
                                        std::to_string(keys.back())) +
                  " (indices must ascend within a line)");
    const char* v = colon + 1;
    token = token_end(v, end);
    // The common binary feature skips the float parser.
    const auto value = token - v == 1 && *v == '1' ? 1.0f : parse_value(v, token);
    if (!value) fail(v, value_fault(v, token, key));
    keys.push_back(key);
    values.push_back(*value);
  }
  return label;
}

libsvm_reader::libsvm_reader(std::string path, std::size_t max_line_bytes)
    : bytes_(std::move(path), std::nullopt), lines_(bytes_, max_line_bytes) {}

libsvm_reader::~libsvm_reader() = default;

sparse_examples libsvm_reader::next(std::size_t max_examples) {
  sparse_examples block;
  while (block.size() < max_examples) {
    const auto line = lines_.next();
    if (!line) break;
    try {
      if (const auto label = parse_libsvm_line(line->text, block.keys, block.values))
        block.close_example(*label);
    } catch (const line_fault& f) {
      throw lines_.fault(*line, f);
    }
  }
  return block;
}

sparse_examples load_libsvm(const std::string& path, std::size_t max_line_bytes) {
  libsvm_reader reader(path, max_line_bytes);
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
