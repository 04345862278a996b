#include "data/csv.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "io/input_file.hpp"

namespace downpour {
namespace {

constexpr std::size_t kReadChunk = std::size_t{1} << 20;
constexpr std::size_t kShownFieldChars = 40;
constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";

struct file_closer {
  void operator()(std::FILE* file) const { std::fclose(file); }
};

// The lines of a file, read in chunks (an MNIST-sized CSV is ~100 MB of
// text: it is never held whole), numbered from 1; errors name the file and
// the current line.
class line_source {
 public:
  explicit line_source(std::string path) : path_(std::move(path)), buffer_(kReadChunk) {
    try {
      input_file file(path_);  // a regular file: a FIFO or a device is refused, never waited on
      errno = 0;
      file_.reset(::fdopen(file.fd(), "rb"));
      if (!file_) fail(std::string("cannot open: ") + std::strerror(errno));
      file.release();
    } catch (const input_error& e) {
      fail(e.reason());
    }
  }

  // The next line without its line end, valid until the next call; nullopt
  // at the end of the file.
  std::optional<std::string_view> next() {
    for (;;) {
      const char* begin = buffer_.data() + start_;
      const auto* newline = static_cast<const char*>(std::memchr(begin, '\n', end_ - start_));
      if (newline) {
        start_ = static_cast<std::size_t>(newline - buffer_.data()) + 1;
        return numbered(std::string_view(begin, static_cast<std::size_t>(newline - begin)));
      }
      if (at_eof_) {
        if (start_ == end_) return std::nullopt;
        const std::string_view last(begin, end_ - start_);
        start_ = end_;
        return numbered(last);
      }
      refill();
    }
  }

  std::size_t line() const { return line_; }

  [[noreturn]] void fail(const std::string& what) const {
    throw data_error("data: " + path_ + ": " + what);
  }
  [[noreturn]] void fail_at(std::size_t column, const std::string& what) const {
    fail("line " + std::to_string(line_) + ", column " + std::to_string(column) + ": " + what);
  }

 private:
  std::string_view numbered(std::string_view text) {
    ++line_;
    if (line_ == 1 && text.substr(0, kByteOrderMark.size()) == kByteOrderMark)
      text.remove_prefix(kByteOrderMark.size());
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    return text;
  }

  // Keeps the unfinished line, grows the buffer if that line fills it, and reads on.
  void refill() {
    std::memmove(buffer_.data(), buffer_.data() + start_, end_ - start_);
    end_ -= start_;
    start_ = 0;
    if (end_ == buffer_.size()) buffer_.resize(2 * buffer_.size());
    errno = 0;
    const std::size_t got = std::fread(buffer_.data() + end_, 1, buffer_.size() - end_, file_.get());
    end_ += got;
    if (std::ferror(file_.get())) fail(std::string("read error: ") + std::strerror(errno));
    at_eof_ = std::feof(file_.get()) != 0;
  }

  std::string path_;
  std::unique_ptr<std::FILE, file_closer> file_;
  std::vector<char> buffer_;
  std::size_t start_ = 0;  // the unread part is buffer_[start_, end_)
  std::size_t end_ = 0;
  bool at_eof_ = false;
  std::size_t line_ = 0;
};

std::string_view trimmed(std::string_view field) {
  const std::size_t first = field.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return field.substr(first, field.find_last_not_of(" \t") - first + 1);
}

// A field as an error message shows it: quoted, shortened, control bytes escaped.
std::string shown(std::string_view field) {
  std::string out = "'";
  for (char c : field.substr(0, kShownFieldChars)) {
    if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) {
      out += c;
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned char>(c));
      out += escaped;
    }
  }
  return out + (field.size() > kShownFieldChars ? "...'" : "'");
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

class csv_dataset final : public dataset {
 public:
  csv_dataset(std::size_t features, std::vector<float> values, std::vector<std::int32_t> labels)
      : features_(features), values_(std::move(values)), labels_(std::move(labels)) {}
  std::size_t size() const override { return labels_.size(); }
  std::size_t features() const override { return features_; }
  void copy_features(std::size_t i, float* out) const override {
    std::copy_n(values_.data() + i * features_, features_, out);
  }
  std::int32_t label(std::size_t i) const override { return labels_[i]; }

 private:
  std::size_t features_;
  std::vector<float> values_;  // size() x features_, row-major
  std::vector<std::int32_t> labels_;
};

// One pass over a file: the first non-blank line fixes the number of fields
// and is either the header or the first row.
class csv_reader {
 public:
  csv_reader(const std::string& path, csv_label_column label) : in_(path), label_(label) {}

  std::shared_ptr<const dataset> read() {
    std::optional<std::string_view> line = in_.next();
    while (line && is_blank(*line)) line = in_.next();
    if (!line) in_.fail("empty file: expected lines of comma-separated features and a label");
    if (in_.line() != 1) in_.fail_at(1, "blank lines before the first row");
    start(*line);
    for (line = in_.next(); line; line = in_.next()) {
      if (is_blank(*line)) {
        if (!first_blank_line_) first_blank_line_ = in_.line();
      } else {
        if (first_blank_line_) {
          in_.fail_at(1, "a row after the blank line " + std::to_string(*first_blank_line_) +
                             " (blank lines may only end the file)");
        }
        read_row(*line);
      }
    }
    if (labels_.empty()) in_.fail("line 1 is a header and no rows follow it");
    return std::make_shared<csv_dataset>(fields_ - 1, std::move(values_), std::move(labels_));
  }

 private:
  void start(std::string_view first) {
    fields_ = 1 + static_cast<std::size_t>(std::count(first.begin(), first.end(), ','));
    if (fields_ < 2) {
      in_.fail_at(1, "1 field, expected at least 2 (features and a label)");
    }
    label_column_ = label_ == csv_label_column::first ? 1 : fields_;
    if (!is_header(first)) read_row(first);
  }

  bool is_header(std::string_view line) const {
    refuse_quotes(line);
    bool header = false;
    std::size_t column = 0;
    for_each_field(line, [&](std::string_view field) {
      if (++column != label_column_ && parse_float(field).fault == float_fault::not_a_number)
        header = true;
    });
    return header;
  }

  void read_row(std::string_view line) {
    refuse_quotes(line);
    const std::size_t found = 1 + static_cast<std::size_t>(std::count(line.begin(), line.end(), ','));
    if (found != fields_) {
      in_.fail_at(std::min(found, fields_) + 1,
                  "row has " + std::to_string(found) + " fields, expected " +
                      std::to_string(fields_) + " as the first line has");
    }
    const std::size_t base = values_.size();
    values_.resize(base + fields_ - 1);
    float* out = values_.data() + base;
    std::size_t column = 0;
    for_each_field(line, [&](std::string_view field) {
      if (++column == label_column_) {
        labels_.push_back(label(field, column));
      } else {
        *out++ = feature(field, column);
      }
    });
  }

  float feature(std::string_view field, std::size_t column) const {
    const parsed_float parsed = parse_float(field);
    if (parsed.fault == float_fault::none && std::isfinite(parsed.value)) return parsed.value;
    if (parsed.fault == float_fault::out_of_range)
      in_.fail_at(column, "feature " + shown(field) + " is out of the range of a float");
    if (parsed.fault == float_fault::none)
      in_.fail_at(column, "feature " + shown(field) + " is not finite (NaN or infinity)");
    if (trimmed(field).empty()) in_.fail_at(column, "empty field, expected a number");
    in_.fail_at(column, "feature " + shown(field) + " is not a number");
  }

  std::int32_t label(std::string_view field, std::size_t column) const {
    const std::string_view text = trimmed(field);
    std::int64_t value = -1;
    const char* end = text.data() + text.size();
    const auto [stop, ec] = std::from_chars(text.data(), end, value);
    if (!text.empty() && stop == end && ec == std::errc() && value >= 0 &&
        value <= std::numeric_limits<std::int32_t>::max())
      return static_cast<std::int32_t>(value);
    in_.fail_at(column, "label " + shown(field) + " is not a non-negative integer (at most " +
                            std::to_string(std::numeric_limits<std::int32_t>::max()) + ")");
  }

  // Before the fields are counted: a quoted field may hold a comma.
  void refuse_quotes(std::string_view line) const {
    const std::size_t quote = line.find('"');
    if (quote == std::string_view::npos) return;
    const std::string_view before = line.substr(0, quote);
    in_.fail_at(1 + static_cast<std::size_t>(std::count(before.begin(), before.end(), ',')),
                "a quote (\"): quoted fields are not supported, only plain numbers");
  }

  template <class Visit>
  static void for_each_field(std::string_view line, Visit visit) {
    for (std::size_t pos = 0;;) {
      const std::size_t comma = line.find(',', pos);
      visit(line.substr(pos, comma == std::string_view::npos ? comma : comma - pos));
      if (comma == std::string_view::npos) return;
      pos = comma + 1;
    }
  }

  line_source in_;
  csv_label_column label_;
  std::size_t fields_ = 0;
  std::size_t label_column_ = 0;
  std::optional<std::size_t> first_blank_line_;
  std::vector<float> values_;
  std::vector<std::int32_t> labels_;
};

}  // namespace

std::shared_ptr<const dataset> load_csv(const std::string& path, csv_label_column label) {
  return csv_reader(path, label).read();
}

}  // namespace downpour
