// Internal to config/: reading one typed value out of the raw option text,
// with the one-line error that names the option, the value and what was
// expected. Ranges are checked here and nowhere else.
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "config/option_table.hpp"

namespace downpour::config_detail {

constexpr long long no_upper_bound = std::numeric_limits<long long>::max();

inline std::string shown(const std::string& text) {
  return text.empty() ? "''" : text;
}

[[noreturn]] inline void bad_value(const raw_value& v, const std::string& name, const char* problem,
                            const std::string& expected) {
  throw config_error("config: " + label(v, name) + "=" + shown(v.text) + " " + problem +
                     " (expected " + expected + ")");
}

inline const raw_value* find(const raw_values& raw, const std::string& name) {
  auto it = raw.find(name);
  return it == raw.end() ? nullptr : &it->second;
}

template <class T>
bool parse_whole(const std::string& text, T& value, std::errc& error) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  error = ec;
  return ec == std::errc() && ptr == end;
}

inline std::string integer_expectation(long long lo, long long hi) {
  if (hi == no_upper_bound) return "an integer >= " + std::to_string(lo);
  return "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
}

template <class T>
T read_integer(const raw_values& raw, const std::string& name, T fallback, long long lo,
               long long hi = no_upper_bound) {
  const raw_value* v = find(raw, name);
  if (!v) return fallback;
  long long value = 0;
  std::errc error{};
  if (!parse_whole(v->text, value, error)) {
    bool overflow = error == std::errc::result_out_of_range;
    bad_value(*v, name, overflow ? "is out of range" : "is not valid", integer_expectation(lo, hi));
  }
  if (value < lo || value > hi) bad_value(*v, name, "is out of range", integer_expectation(lo, hi));
  return static_cast<T>(value);
}

inline std::uint64_t read_seed(const raw_values& raw, std::uint64_t fallback) {
  const raw_value* v = find(raw, "seed");
  if (!v) return fallback;
  std::uint64_t value = 0;
  std::errc error{};
  if (!parse_whole(v->text, value, error)) {
    bool overflow = error == std::errc::result_out_of_range;
    bad_value(*v, "seed", overflow ? "is out of range" : "is not valid",
              "an integer from 0 to " + std::to_string(std::numeric_limits<std::uint64_t>::max()));
  }
  return value;
}

struct real_bounds {
  double lo;
  bool lo_open;
  double hi;  // infinity: none
  bool hi_open;
  const char* expected;
};

constexpr real_bounds positive{0, true, INFINITY, true, "a finite number > 0"};
constexpr real_bounds non_negative{0, false, INFINITY, true, "a finite number >= 0"};
constexpr real_bounds decay_rate{0, true, 1, false, "a number in (0, 1]"};
constexpr real_bounds ema_range{0, false, 1, true, "a number in [0, 1)"};

// Every duration option is read with one of these (read_duration), so none
// can reach a clock conversion that overflows (config/durations.hpp).
static_assert(max_duration_s == 1e6, "the texts below name the bound");
constexpr real_bounds duration_positive{0, true, max_duration_s, false,
                                        "seconds > 0 and at most 1000000"};
constexpr real_bounds duration_or_off{0, false, max_duration_s, false,
                                      "seconds >= 0 (0: off) and at most 1000000"};

inline bool within(double x, const real_bounds& b) {
  bool above = b.lo_open ? x > b.lo : x >= b.lo;
  bool below = b.hi_open ? x < b.hi : x <= b.hi;
  return std::isfinite(x) && above && below;
}

template <class T>
T read_real(const raw_values& raw, const std::string& name, T fallback, const real_bounds& b) {
  const raw_value* v = find(raw, name);
  if (!v) return fallback;
  double value = 0;
  std::errc error{};
  if (!parse_whole(v->text, value, error)) {
    bool overflow = error == std::errc::result_out_of_range;
    bad_value(*v, name, overflow ? "is out of range" : "is not valid", b.expected);
  }
  // Check what will be stored: 1e-50 is > 0 as a double but 0 as a float.
  bool representable = std::fabs(value) <= std::numeric_limits<T>::max();
  if (!representable || !within(static_cast<double>(static_cast<T>(value)), b))
    bad_value(*v, name, "is out of range", b.expected);
  return static_cast<T>(value);
}

// Whether 0 is a duration option's "off".
enum class duration_zero { refused, turns_off };

// Every duration option (the SEC options of --help) is read here: finite,
// above 0 (or 0 for off) and at most max_duration_s.
inline double read_duration(const raw_values& raw, const std::string& name, double fallback,
                            duration_zero zero) {
  return read_real(raw, name, fallback,
                   zero == duration_zero::turns_off ? duration_or_off : duration_positive);
}

inline bool read_flag(const raw_values& raw, const std::string& name, bool fallback) {
  const raw_value* v = find(raw, name);
  if (!v) return fallback;
  for (const char* yes : {"true", "1", "yes", "on"})
    if (v->text == yes) return true;
  for (const char* no : {"false", "0", "no", "off"})
    if (v->text == no) return false;
  bad_value(*v, name, "is not valid", "true|false");
}

template <class E>
E read_choice(const raw_values& raw, const std::string& name, E fallback,
              std::initializer_list<E> all) {
  const raw_value* v = find(raw, name);
  if (!v) return fallback;
  std::string expected;
  for (E e : all) {
    if (to_string(e) == v->text) return e;
    expected += (expected.empty() ? "" : "|") + to_string(e);
  }
  bad_value(*v, name, "is not valid", expected);
}

inline std::string read_word(const raw_values& raw, const std::string& name, const std::string& fallback,
                      std::initializer_list<const char*> all) {
  const raw_value* v = find(raw, name);
  if (!v) return fallback;
  std::string expected;
  for (const char* word : all) {
    if (v->text == word) return word;
    expected += (expected.empty() ? "" : "|") + std::string(word);
  }
  bad_value(*v, name, "is not valid", expected);
}

// "500,300": a list of sizes, each >= 1; the error names the bad entry.
inline std::vector<std::size_t> read_sizes(const raw_values& raw, const std::string& name,
                                           const std::vector<std::size_t>& fallback) {
  const raw_value* v = find(raw, name);
  if (!v) return fallback;
  const std::string expected = "a comma-separated list of integers >= 1, e.g. 500,300";
  std::vector<std::size_t> sizes;
  std::size_t from = 0;
  for (;;) {
    const std::size_t comma = std::min(v->text.find(',', from), v->text.size());
    const std::string entry = v->text.substr(from, comma - from);
    unsigned long long value = 0;
    std::errc error{};
    if (!parse_whole(entry, value, error) || value < 1 ||
        value > std::numeric_limits<std::size_t>::max())
      bad_value(*v, name, ("has a bad entry '" + entry + "'").c_str(), expected);
    sizes.push_back(static_cast<std::size_t>(value));
    if (comma == v->text.size()) return sizes;
    from = comma + 1;
  }
}

inline std::vector<host_port> read_hosts(const raw_values& raw, const std::string& name,
                                  const std::vector<host_port>& fallback) {
  const raw_value* v = find(raw, name);
  return v ? parse_host_list(v->text, label(*v, name)) : fallback;
}

inline std::string read_text(const raw_values& raw, const std::string& name, const std::string& fallback) {
  const raw_value* v = find(raw, name);
  if (v && v->text.empty()) bad_value(*v, name, "is not valid", "a non-empty path");
  return v ? v->text : fallback;
}

}  // namespace downpour::config_detail
