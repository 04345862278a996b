#include "reporting/log.hpp"

#include <ctime>
#include <regex>
#include <sstream>
#include <streambuf>

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

std::string format_log_line(std::chrono::system_clock::time_point t, const std::string& node,
                            log_level level, const std::string& message) {
  std::string line = utc_timestamp(t);
  line += ' ';
  line += node;
  line += ' ';
  line += level_name(level);
  line += ' ';
  line += message;
  line += '\n';
  return line;
}

std::string format_json_log_line(std::chrono::system_clock::time_point t, const std::string& node,
                                 log_level level, const std::string& message) {
  return format_log_json({utc_timestamp(t), node, level_name(level), message});
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
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    if (traits_type::to_char_type(c) == '\n') {
      log_.write(level_, pending_);
      pending_.clear();
    } else {
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
