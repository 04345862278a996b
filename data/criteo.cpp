#include "data/criteo.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>

#include "data/line_reader.hpp"

namespace downpour {
namespace {

constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325ull;
constexpr std::uint64_t kFnvPrime = 0x100000001b3ull;

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

// log(1 + x) of an integer field, 0 for a negative one; a float is taken too.
float integer_value(std::string_view text, std::size_t field, std::size_t column) {
  double x = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, x);
  if (ec != std::errc{} || ptr != end || !std::isfinite(x))
    throw line_fault{column, field_name(field) + ": bad number " + shown_token(text) +
                                 " (expected an integer, or nothing)"};
  return x > 0 ? static_cast<float>(std::log1p(x)) : 0.0f;
}

std::uint8_t label_of(std::string_view text) {
  if (text == "1") return 1;
  if (text == "0") return 0;
  throw line_fault{1, "bad label " + shown_token(text) + " (expected 0 or 1)"};
}

// Categorical features all have the value 1 and keys above the integer
// fields': sorting their keys sorts the line. A hash collision of two
// fields (about one in 10^16 lines) keeps one.
void sort_categorical(std::vector<std::uint64_t>& keys, std::vector<float>& values,
                      std::size_t first) {
  std::sort(keys.begin() + static_cast<std::ptrdiff_t>(first), keys.end());
  keys.erase(std::unique(keys.begin() + static_cast<std::ptrdiff_t>(first), keys.end()),
             keys.end());
  values.resize(keys.size());
}

}  // namespace

std::uint64_t criteo_key(std::size_t field, std::string_view value) {
  std::uint64_t h = kFnvOffset ^ finish(field + 1);
  for (unsigned char c : value) h = (h ^ c) * kFnvPrime;
  constexpr std::uint64_t span = std::numeric_limits<std::uint64_t>::max() - criteo_integer_fields;
  return criteo_integer_fields + finish(h) % span;
}

std::optional<std::uint8_t> parse_criteo_line(std::string_view line,
                                              std::vector<std::uint64_t>& keys,
                                              std::vector<float>& values) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.empty()) return std::nullopt;
  std::size_t categorical = keys.size();
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
        categorical = keys.size();
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
  sort_categorical(keys, values, categorical);
  return label;
}

}  // namespace downpour
