#include "data/csv.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "data/byte_reader.hpp"
#include "data/line_reader.hpp"

namespace downpour {
namespace {

// The lines of a file through the one line reader (plain or gzip, at most
// max_line_bytes a line: a file of any size is never held whole), numbered
// from 1; errors name the file and the current line.
class numbered_lines {
 public:
  numbered_lines(const std::string& path, std::size_t max_line_bytes)
      : bytes_(path, std::nullopt), lines_(bytes_, max_line_bytes) {}

  // The next line without its line end, valid until the next call; nullopt
  // at the end of the file.
  std::optional<std::string_view> next() {
    const std::optional<line_reader::line> got = lines_.next();
    if (!got) return std::nullopt;
    ++line_;
    return csv_line_text(got->text, got->offset);
  }

  std::size_t line() const { return line_; }

  [[noreturn]] void fail(const std::string& what) const {
    throw data_error("data: " + bytes_.path() + ": " + what);
  }
  [[noreturn]] void fail_at(std::size_t column, const std::string& what) const {
    fail("line " + std::to_string(line_) + ", column " + std::to_string(column) + ": " + what);
  }

 private:
  byte_reader bytes_;
  line_reader lines_;
  std::size_t line_ = 0;
};

std::string_view trimmed(std::string_view field) {
  const std::size_t first = field.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return field.substr(first, field.find_last_not_of(" \t") - first + 1);
}

enum class float_fault { none, not_a_number, out_of_range };

struct parsed_float {
  float value = 0;
  float_fault fault = float_fault::none;
};

// from_chars takes neither a leading '+' nor surrounding blanks; a value too
// small for a float becomes 0 (or a subnormal), one too large is a fault.
parsed_float parse_float(std::string_view field) {
  field = trimmed(field);
  if (field.size() > 1 && field[0] == '+' && field[1] != '-') field.remove_prefix(1);
  parsed_float out;
  const char* end = field.data() + field.size();
  const auto [stop, ec] = std::from_chars(field.data(), end, out.value);
  if (field.empty() || stop != end || ec == std::errc::invalid_argument) {
    out.fault = float_fault::not_a_number;
  } else if (ec == std::errc::result_out_of_range) {
    const double wide = std::strtod(std::string(field).c_str(), nullptr);
    if (std::fabs(wide) > std::numeric_limits<float>::max()) {
      out.fault = float_fault::out_of_range;
    } else {
      out.value = static_cast<float>(wide);
    }
  }
  return out;
}

bool is_blank(std::string_view line) { return trimmed(line).empty(); }

template <class Visit>
void for_each_field(std::string_view line, Visit visit) {
  for (std::size_t pos = 0;;) {
    const std::size_t comma = line.find(',', pos);
    visit(line.substr(pos, comma == std::string_view::npos ? comma : comma - pos));
    if (comma == std::string_view::npos) return;
    pos = comma + 1;
  }
}

[[noreturn]] void fault(std::size_t column, std::string what) {
  throw line_fault{column, std::move(what)};
}

// Before the fields are counted: a quoted field may hold a comma.
void refuse_quotes(std::string_view line) {
  const std::size_t quote = line.find('"');
  if (quote == std::string_view::npos) return;
  const std::string_view before = line.substr(0, quote);
  fault(1 + static_cast<std::size_t>(std::count(before.begin(), before.end(), ',')),
        "a quote (\"): quoted fields are not supported, only plain numbers");
}

float feature(std::string_view field, std::size_t column) {
  const parsed_float parsed = parse_float(field);
  if (parsed.fault == float_fault::none && std::isfinite(parsed.value)) return parsed.value;
  if (parsed.fault == float_fault::out_of_range)
    fault(column, "feature " + shown_token(field) + " is out of the range of a float");
  if (parsed.fault == float_fault::none)
    fault(column, "feature " + shown_token(field) + " is not finite (NaN or infinity)");
  if (trimmed(field).empty()) fault(column, "empty field, expected a number");
  fault(column, "feature " + shown_token(field) + " is not a number");
}

std::int32_t label_of(std::string_view field, std::size_t column) {
  const std::string_view text = trimmed(field);
  std::int64_t value = -1;
  const char* end = text.data() + text.size();
  const auto [stop, ec] = std::from_chars(text.data(), end, value);
  if (!text.empty() && stop == end && ec == std::errc() && value >= 0 &&
      value <= std::numeric_limits<std::int32_t>::max())
    return static_cast<std::int32_t>(value);
  fault(column, "label " + shown_token(field) + " is not a non-negative integer (at most " +
                    std::to_string(std::numeric_limits<std::int32_t>::max()) + ")");
}

}  // namespace

std::string_view csv_line_text(std::string_view line, std::uint64_t offset) {
  constexpr std::string_view byte_order_mark = "\xEF\xBB\xBF";
  if (offset == 0 && line.substr(0, byte_order_mark.size()) == byte_order_mark)
    line.remove_prefix(byte_order_mark.size());
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

csv_row_layout csv_layout_of(std::string_view first, csv_label_column label) {
  csv_row_layout layout;
  layout.fields = 1 + static_cast<std::size_t>(std::count(first.begin(), first.end(), ','));
  if (layout.fields < 2) fault(1, "1 field, expected at least 2 (features and a label)");
  layout.label_column = label == csv_label_column::first ? 1 : layout.fields;
  return layout;
}

bool csv_is_header(std::string_view line, const csv_row_layout& layout) {
  refuse_quotes(line);
  bool header = false;
  std::size_t column = 0;
  for_each_field(line, [&](std::string_view field) {
    if (++column != layout.label_column && parse_float(field).fault == float_fault::not_a_number)
      header = true;
  });
  return header;
}

std::int32_t parse_csv_row(std::string_view line, const csv_row_layout& layout, float* out) {
  refuse_quotes(line);
  const std::size_t found = 1 + static_cast<std::size_t>(std::count(line.begin(), line.end(), ','));
  if (found != layout.fields)
    fault(std::min(found, layout.fields) + 1,
          "row has " + std::to_string(found) + " fields, expected " +
              std::to_string(layout.fields) + " as the first line has");
  std::int32_t label = 0;
  std::size_t column = 0;
  for_each_field(line, [&](std::string_view field) {
    if (++column == layout.label_column)
      label = label_of(field, column);
    else
      *out++ = feature(field, column);
  });
  return label;
}

namespace {

// One pass over a file: the first non-blank line fixes the number of fields
// and is either the header or the first row.
class csv_reader {
 public:
  csv_reader(const std::string& path, csv_label_column label, std::size_t max_line_bytes)
      : in_(path, max_line_bytes), label_(label) {}

  std::shared_ptr<const dataset> read() {
    std::optional<std::string_view> line = in_.next();
    while (line && is_blank(*line)) line = in_.next();
    if (!line) in_.fail("empty file: expected lines of comma-separated features and a label");
    if (in_.line() != 1) in_.fail_at(1, "blank lines before the first row");
    at_line([&] { start(*line); });
    for (line = in_.next(); line; line = in_.next()) {
      if (is_blank(*line)) {
        if (!first_blank_line_) first_blank_line_ = in_.line();
      } else {
        if (first_blank_line_) {
          in_.fail_at(1, "a row after the blank line " + std::to_string(*first_blank_line_) +
                             " (blank lines may only end the file)");
        }
        at_line([&] { read_row(*line); });
      }
    }
    if (labels_.empty()) in_.fail("line 1 is a header and no rows follow it");
    return dense_dataset(layout_.fields - 1, std::move(values_), std::move(labels_));
  }

 private:
  // A fault of the line at hand, as "line N, column M: ..." (M in fields).
  template <class Read>
  void at_line(Read read) {
    try {
      read();
    } catch (const line_fault& f) {
      in_.fail_at(f.column, f.what);
    }
  }

  void start(std::string_view first) {
    layout_ = csv_layout_of(first, label_);
    if (!csv_is_header(first, layout_)) read_row(first);
  }

  void read_row(std::string_view line) {
    const std::size_t base = values_.size();
    values_.resize(base + layout_.fields - 1);
    labels_.push_back(parse_csv_row(line, layout_, values_.data() + base));
  }

  numbered_lines in_;
  csv_label_column label_;
  csv_row_layout layout_;
  std::optional<std::size_t> first_blank_line_;
  std::vector<float> values_;
  std::vector<std::int32_t> labels_;
};

}  // namespace

std::shared_ptr<const dataset> load_csv(const std::string& path, csv_label_column label,
                                        std::size_t max_line_bytes) {
  return csv_reader(path, label, max_line_bytes).read();
}

}  // namespace downpour
