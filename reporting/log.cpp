#include "reporting/log.hpp"

#include <algorithm>
#include <ctime>
#include <regex>
#include <sstream>
#include <streambuf>
#include <utility>

#include "reporting/log_json.hpp"

namespace downpour {

const char* level_name(log_level level) {
  switch (level) {
    case log_level::error:
      return "ERROR";
    case log_level::warn:
      return "WARN";
    case log_level::info:
      return "INFO";
    case log_level::debug:
      return "DEBUG";
  }
  return "INFO";
}

std::string utc_timestamp(std::chrono::system_clock::time_point t) {
  using namespace std::chrono;
  const auto ms = duration_cast<milliseconds>(t.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  long long frac = ms % 1000;
  if (frac < 0) {  // before 1970: floor, not truncation
    frac += 1000;
    --secs;
  }
  std::tm utc{};
  ::gmtime_r(&secs, &utc);
  char buf[40];
  std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(buf + n, sizeof buf - n, ".%03lldZ", frac);
  return buf;
}

namespace {

// A UTF-8 character at text[i]: its code point and length; length 0 when the
// bytes there are not well-formed UTF-8 (overlong forms and surrogates included).
struct utf8_char {
  char32_t code = 0;
  std::size_t length = 0;
};

utf8_char decode_utf8(const std::string& text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return {lead, 1};
  const std::size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 0;
  if (length == 0 || lead > 0xF4 || i + length > text.size()) return {};
  char32_t code = lead & (0x7F >> length);
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return {};
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  static constexpr char32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < smallest[length] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return {};
  return {code, length};
}

// Characters that must not reach a terminal or a log viewer as they are.
bool needs_escape(char32_t c) {
  return c < 0x20 || (c >= 0x7F && c <= 0x9F) || c == 0x061C || c == 0x200E || c == 0x200F ||
         c == 0x2028 || c == 0x2029 || (c >= 0x202A && c <= 0x202E) ||
         (c >= 0x2066 && c <= 0x2069);
}

// What the character (or stray byte) at text[i] becomes, and its length in text.
std::pair<std::string, std::size_t> escaped_at(const std::string& text, std::size_t i) {
  char buf[16];
  const utf8_char c = decode_utf8(text, i);
  if (c.length == 0 || (c.code < 0x80 && needs_escape(c.code))) {
    std::snprintf(buf, sizeof buf, "\\x%02X", static_cast<unsigned char>(text[i]));
    return {buf, 1};
  }
  if (needs_escape(c.code)) {
    std::snprintf(buf, sizeof buf, "\\u%04X", static_cast<unsigned>(c.code));
    return {buf, c.length};
  }
  return {text.substr(i, c.length), c.length};
}

}  // namespace

std::string printable_line(const std::string& text) {
  std::string out;
  out.reserve(std::min(text.size(), max_log_message_bytes) + 32);
  for (std::size_t i = 0; i < text.size();) {
    auto [piece, length] = escaped_at(text, i);
    if (out.size() + piece.size() > max_log_message_bytes) return out + log_cut_mark;
    out += piece;
    i += length;
  }
  return out;
}

std::string format_log_line(std::chrono::system_clock::time_point t, const std::string& node,
                            log_level level, const std::string& message) {
  std::string line = utc_timestamp(t);
  line += ' ';
  line += node;
  line += ' ';
  line += level_name(level);
  line += ' ';
  line += printable_line(message);
  line += '\n';
  return line;
}

std::string format_json_log_line(std::chrono::system_clock::time_point t, const std::string& node,
                                 log_level level, const std::string& message) {
  return format_log_json({utc_timestamp(t), node, level_name(level), printable_line(message)});
}

namespace {

// A --log-format=json line as a record: the same fields, a known level.
std::optional<log_record> parse_json_log_line(const std::string& line) {
  auto f = parse_log_json(line);
  if (!f) return std::nullopt;
  for (auto level : {log_level::error, log_level::warn, log_level::info, log_level::debug})
    if (f->level == level_name(level)) return log_record{f->time, f->node, level, f->message};
  return std::nullopt;
}

}  // namespace

std::optional<log_record> parse_log_line(const std::string& line) {
  if (!line.empty() && line.front() == '{') return parse_json_log_line(line);
  static const std::regex format(R"((\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) )"
                                 R"(([a-z]+:\d+) (ERROR|WARN|INFO|DEBUG) (.*)\n?)");
  std::smatch m;
  if (!std::regex_match(line, m, format)) return std::nullopt;
  log_record r{m[1], m[2], log_level::info, m[4]};
  for (auto level : {log_level::error, log_level::warn, log_level::info, log_level::debug})
    if (m[3] == level_name(level)) r.level = level;
  return r;
}

std::vector<log_record> parse_log(const std::string& text) {
  std::vector<log_record> records;
  std::size_t begin = 0;
  for (auto end = text.find('\n'); end != std::string::npos; end = text.find('\n', begin)) {
    if (auto r = parse_log_line(text.substr(begin, end - begin))) records.push_back(*r);
    begin = end + 1;
  }
  return records;
}

std::string node_name(role_kind role, std::size_t task) {
  if (role == role_kind::local) role = role_kind::worker;  // the chief of a local job
  return to_string(role) + ":" + std::to_string(task);
}

logger::logger(std::string node, log_level threshold, log_format_kind format)
    : node_(std::move(node)), threshold_(threshold), format_(format) {}

logger::logger(std::string node, log_level threshold, std::FILE* out, std::FILE* err)
    : node_(std::move(node)), threshold_(threshold), out_(out), err_(err) {}

void logger::write(log_level level, const std::string& message) const {
  if (!enabled(level)) return;
  const auto now = std::chrono::system_clock::now();
  const std::string line = format_ == log_format_kind::json
                               ? format_json_log_line(now, node_, level, message)
                               : format_log_line(now, node_, level, message);
  std::FILE* to = level <= log_level::warn ? err_ : out_;
  std::fwrite(line.data(), 1, line.size(), to);
  std::fflush(to);
}

logger logger::for_node(std::string node) const {
  logger copy = *this;
  copy.node_ = std::move(node);
  return copy;
}

logger node_logger(const options& opts, role_kind role, std::size_t task) {
  return logger{node_name(role, task), opts.log_threshold, opts.log_format};
}

log_throttle::log_throttle(std::chrono::steady_clock::duration interval)
    : interval_(interval) {}

std::optional<std::string> log_throttle::pass(const std::string& kind) {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(mutex_);
  auto [it, first] = kinds_.try_emplace(kind);
  seen& s = it->second;
  if (!first && now - s.last < interval_) {
    ++s.suppressed;
    return std::nullopt;
  }
  std::string more;
  if (s.suppressed > 0) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.0f",
                  std::chrono::duration<double>(now - s.last).count());
    more = " (and " + std::to_string(s.suppressed) + " more like it in the last " + seconds +
           " s)";
  }
  s.last = now;
  s.suppressed = 0;
  return more;
}

// Collects characters until a newline, then logs the line without it.
class log_stream::line_buffer : public std::streambuf {
 public:
  line_buffer(logger log, log_level level) : log_(std::move(log)), level_(level) {}
  ~line_buffer() override {
    if (!pending_.empty()) log_.write(level_, pending_);
  }

 protected:
  // A line is kept only as far as a log line can show it (and a little
  // more, so that the cut is marked): a stream without newlines stays small.
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    if (traits_type::to_char_type(c) == '\n') {
      log_.write(level_, pending_);
      pending_.clear();
    } else if (pending_.size() <= max_log_message_bytes) {
      pending_ += traits_type::to_char_type(c);
    }
    return c;
  }

 private:
  logger log_;
  log_level level_;
  std::string pending_;
};

log_stream::log_stream(logger log, log_level level)
    : std::ostream(nullptr), buffer_(std::make_unique<line_buffer>(std::move(log), level)) {
  rdbuf(buffer_.get());
}

log_stream::~log_stream() { rdbuf(nullptr); }

std::string step_log_line(std::int64_t global_step, std::int64_t step, float loss) {
  std::ostringstream out;
  out << "global_step:" << global_step << ",step:" << step << ",loss:" << loss;
  return out.str();
}

std::string fixed_text(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace downpour
