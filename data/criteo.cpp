#include "data/criteo.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <string>

#include "data/line_reader.hpp"

namespace downpour {
namespace {

std::uint64_t finish(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::string field_name(std::size_t index) {
  if (index == 0) return "the label";
  if (index <= criteo_integer_fields) return "I" + std::to_string(index);
  return "C" + std::to_string(index - criteo_integer_fields);
}

// Counts are mostly small: their log(1 + x) is looked up.
constexpr std::size_t kTabled = 4096;

const std::array<float, kTabled>& log1p_table() {
  static const std::array<float, kTabled> table = [] {
    std::array<float, kTabled> t{};
    for (std::size_t x = 0; x < kTabled; ++x) t[x] = static_cast<float>(std::log1p(double(x)));
    return t;
  }();
  return table;
}

// log(1 + x) of an integer field, 0 for a negative one; a float is taken too.
float integer_value(std::string_view text, std::size_t field, std::size_t column) {
  const char* end = text.data() + text.size();
  std::int64_t n = 0;
  if (const auto [ptr, ec] = std::from_chars(text.data(), end, n); ec == std::errc{} && ptr == end) {
    if (n <= 0) return 0.0f;
    if (static_cast<std::uint64_t>(n) < kTabled) return log1p_table()[static_cast<std::size_t>(n)];
    return static_cast<float>(std::log1p(static_cast<double>(n)));
  }
  double x = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), end, x);
  if (ec != std::errc{} || ptr != end || !std::isfinite(x))
    throw line_fault{column, field_name(field) + ": bad number " + shown_token(text) +
                                 " (expected an integer, or nothing)"};
  return x > 0 ? static_cast<float>(std::log1p(x)) : 0.0f;
}

// Up to 8 bytes as a little-endian word, the same on every machine.
std::uint64_t word_of(const char* p, std::size_t n) {
  std::uint64_t w = 0;
  for (std::size_t i = 0; i < n; ++i) w |= std::uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return w;
}

std::uint8_t label_of(std::string_view text) {
  if (text == "1") return 1;
  if (text == "0") return 0;
  throw line_fault{1, "bad label " + shown_token(text) + " (expected 0 or 1)"};
}

}  // namespace

// Eight bytes at a time through splitmix64's finaliser, seeded with the
// field and the length; the field's number above the hash's top 58 bits.
std::uint64_t criteo_key(std::size_t field, std::string_view value) {
  std::uint64_t h = finish((field + 1) * 0x9e3779b97f4a7c15ull ^ value.size());
  const char* p = value.data();
  std::size_t n = value.size();
  for (; n >= 8; p += 8, n -= 8) h = finish(h ^ word_of(p, 8));
  if (n > 0) h = finish(h ^ word_of(p, n));
  const std::uint64_t tag = criteo_integer_fields + field;
  return tag << criteo_field_shift | h >> (64 - criteo_field_shift);
}

std::size_t criteo_field_of(std::uint64_t key) {
  const std::uint64_t tag = key >> criteo_field_shift;
  if (tag == 0 && key < criteo_integer_fields) return static_cast<std::size_t>(key);
  if (tag >= criteo_integer_fields && tag < criteo_feature_fields)
    return static_cast<std::size_t>(tag);
  throw std::invalid_argument("criteo: feature key " + std::to_string(key) +
                              " is not one a Criteo line gives (expected 0..12 or a categorical "
                              "field in the top 6 bits; --data-format=criteo)");
}

std::optional<std::uint8_t> parse_criteo_line(std::string_view line,
                                              std::vector<std::uint64_t>& keys,
                                              std::vector<float>& values) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.empty()) return std::nullopt;
  std::uint8_t label = 0;
  std::size_t field = 0;
  for (std::size_t pos = 0;; ++field) {
    const std::size_t tab = line.find('\t', pos);
    const std::string_view text = line.substr(pos, tab == std::string_view::npos ? tab : tab - pos);
    if (field >= criteo_fields)
      throw line_fault{pos + 1, "more than " + std::to_string(criteo_fields) +
                                    " tab-separated fields (expected the label, I1..I13, "
                                    "C1..C26)"};
    if (field == 0) {
      label = label_of(text);
    } else if (field <= criteo_integer_fields) {
      const float v = text.empty() ? 0.0f : integer_value(text, field, pos + 1);
      if (v != 0.0f) {
        keys.push_back(field - 1);
        values.push_back(v);
      }
    } else if (!text.empty()) {
      keys.push_back(criteo_key(field - 1 - criteo_integer_fields, text));
      values.push_back(1.0f);
    }
    if (tab == std::string_view::npos) break;
    pos = tab + 1;
  }
  if (field + 1 != criteo_fields)
    throw line_fault{line.size() + 1, std::to_string(field + 1) +
                                          " tab-separated fields, expected " +
                                          std::to_string(criteo_fields) +
                                          " (the label, I1..I13, C1..C26)"};
  return label;
}

}  // namespace downpour
