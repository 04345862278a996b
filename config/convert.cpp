// Text -> typed options, with one-line errors naming the option, the bad value
// and what was expected. Ranges are checked here and nowhere else, so the rest
// of the program can trust an options value.
#include <charconv>
#include <cmath>
#include <limits>

#include "config/option_table.hpp"

namespace downpour {
namespace config_detail {
namespace {

constexpr long long no_upper_bound = std::numeric_limits<long long>::max();

std::string shown(const std::string& text) {
  return text.empty() ? "''" : text;
}

[[noreturn]] void bad_value(const raw_value& v, const std::string& name, const char* problem,
                            const std::string& expected) {
  throw config_error("config: " + label(v, name) + "=" + shown(v.text) + " " + problem +
                     " (expected " + expected + ")");
}

const raw_value* find(const raw_values& raw, const std::string& name) {
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

std::string integer_expectation(long long lo, long long hi) {
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

std::uint64_t read_seed(const raw_values& raw, std::uint64_t fallback) {
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

bool within(double x, const real_bounds& b) {
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

bool read_flag(const raw_values& raw, const std::string& name, bool fallback) {
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

std::string read_word(const raw_values& raw, const std::string& name, const std::string& fallback,
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

std::vector<host_port> read_hosts(const raw_values& raw, const std::string& name,
                                  const std::vector<host_port>& fallback) {
  const raw_value* v = find(raw, name);
  return v ? parse_host_list(v->text, label(*v, name)) : fallback;
}

std::string read_text(const raw_values& raw, const std::string& name, const std::string& fallback) {
  const raw_value* v = find(raw, name);
  if (v && v->text.empty()) bad_value(*v, name, "is not valid", "a non-empty path");
  return v ? v->text : fallback;
}

options read_files_and_model(options o, const raw_values& raw) {
  o.config_file = read_text(raw, "config", o.config_file);
  o.data_dir = read_text(raw, "data-dir", o.data_dir);
  o.checkpoint_dir = read_text(raw, "checkpoint-dir", o.checkpoint_dir);
  o.validation_size = read_integer(raw, "validation-size", o.validation_size, 0);
  o.batch_size = read_integer(raw, "batch-size", o.batch_size, 1);
  o.hidden_units = read_integer(raw, "hidden-units", o.hidden_units, 1);
  o.learning_rate = read_real(raw, "learning-rate", o.learning_rate, positive);
  o.lr_decay_rate = read_real(raw, "lr-decay-rate", o.lr_decay_rate, decay_rate);
  o.lr_decay_steps = read_integer(raw, "lr-decay-steps", o.lr_decay_steps, 1);
  o.lr_staircase = read_flag(raw, "lr-staircase", o.lr_staircase);
  o.l2 = read_real(raw, "l2", o.l2, non_negative);
  o.ema_decay = read_real(raw, "ema-decay", o.ema_decay, ema_range);
  o.last_step = read_integer(raw, "last-step", o.last_step, 1);
  o.seed = read_seed(raw, o.seed);
  o.log_every = read_integer(raw, "log-every", o.log_every, 1);
  o.quiet = read_flag(raw, "quiet", o.quiet);
  o.save_checkpoint_secs =
      read_real(raw, "save-checkpoint-secs", o.save_checkpoint_secs, non_negative);
  o.save_checkpoint_steps = read_integer(raw, "save-checkpoint-steps", o.save_checkpoint_steps, 0);
  o.keep_checkpoints = read_integer(raw, "keep-checkpoints", o.keep_checkpoints, 1);
  o.checkpoint_file = read_text(raw, "checkpoint", o.checkpoint_file);
  o.out_file = read_text(raw, "out", o.out_file);
  o.export_ema = read_flag(raw, "ema", o.export_ema);
  return o;
}

options read_cluster(options o, const raw_values& raw) {
  using R = role_kind;
  o.role = read_choice(raw, "role", o.role, {R::local, R::ps, R::worker, R::reference});
  o.task = read_integer(raw, "task", o.task, 0);
  o.ps_hosts = read_hosts(raw, "ps-hosts", o.ps_hosts);
  o.worker_hosts = read_hosts(raw, "worker-hosts", o.worker_hosts);
  o.mode = read_choice(raw, "mode", o.mode, {train_mode::async, train_mode::sync, train_mode::ssp});
  o.staleness = read_integer(raw, "staleness", o.staleness, 0);
  o.replicas_to_aggregate = read_integer(raw, "replicas-to-aggregate", o.replicas_to_aggregate, 0);
  o.placement = read_choice(raw, "placement", o.placement,
                            {placement_kind::balanced, placement_kind::round_robin});
  o.transport =
      read_choice(raw, "transport", o.transport, {transport_kind::inproc, transport_kind::tcp});
  o.connect_timeout_s = read_real(raw, "connect-timeout", o.connect_timeout_s, positive);
  o.scheduler_policy =
      read_word(raw, "scheduler-policy", o.scheduler_policy, {"sharing", "stealing"});
  o.scheduler_threads = read_integer(raw, "scheduler-threads", o.scheduler_threads, 0, 256);
  return o;
}

// Limits that depend on another option; the error names the option whose
// value is out of range and says which list bounds it.
void check_cluster(const options& o, const raw_values& raw) {
  auto value_of = [&](const std::string& name, std::size_t value) {
    const raw_value* v = find(raw, name);
    return v ? *v : raw_value{std::to_string(value), "", name};
  };
  if (o.role == role_kind::ps || o.role == role_kind::worker) {
    const bool ps = o.role == role_kind::ps;
    const std::size_t hosts = ps ? o.ps_hosts.size() : o.worker_hosts.size();
    if (o.task >= hosts)
      bad_value(value_of("task", o.task), "task", "is out of range",
                integer_expectation(0, static_cast<long long>(hosts) - 1) + " for " +
                    std::to_string(hosts) + (ps ? " --ps-hosts" : " --worker-hosts"));
  }
}

}  // namespace

options build_options(const raw_values& raw) {
  options o = read_cluster(read_files_and_model(options{}, raw), raw);
  check_cluster(o, raw);
  return o;
}

}  // namespace config_detail

std::string to_string(role_kind r) {
  switch (r) {
    case role_kind::local:
      return "local";
    case role_kind::ps:
      return "ps";
    case role_kind::worker:
      return "worker";
    case role_kind::reference:
      return "reference";
  }
  return "unknown";
}

std::string to_string(train_mode m) {
  switch (m) {
    case train_mode::sync:
      return "sync";
    case train_mode::ssp:
      return "ssp";
    default:
      return "async";
  }
}

std::string to_string(command_kind c) {
  switch (c) {
    case command_kind::eval:
      return "eval";
    case command_kind::inspect:
      return "inspect";
    case command_kind::export_npz:
      return "export";
    default:
      return "train";
  }
}

std::string to_string(placement_kind p) {
  return p == placement_kind::round_robin ? "round-robin" : "balanced";
}

std::string to_string(transport_kind t) {
  return t == transport_kind::tcp ? "tcp" : "inproc";
}

}  // namespace downpour
