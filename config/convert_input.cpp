// How the data files are read: in memory or streamed, the shuffle buffer,
// the passes and the longest line (docs/input.md).
#include "config/readers.hpp"

namespace downpour {
namespace config_detail {
namespace {

// Two shuffle windows of this many examples are held: past it, a worker
// holds more than a parameter server wants it to.
constexpr long long max_shuffle_buffer = 1LL << 26;
constexpr long long max_line_limit = 1LL << 30;

}  // namespace

options read_input_options(options o, const raw_values& raw) {
  using K = input_kind;
  o.input = read_choice(raw, "input", o.input, {K::automatic, K::memory, K::stream});
  o.shuffle_buffer = read_integer(raw, "shuffle-buffer", o.shuffle_buffer, 1, max_shuffle_buffer);
  o.passes = read_integer(raw, "passes", o.passes, 0);
  o.max_line_bytes = read_integer(raw, "max-line-bytes", o.max_line_bytes, 64, max_line_limit);
  return o;
}

options read_data_format(options o, const raw_values& raw, const known_formats& formats) {
  const raw_value* v = find(raw, "data-format");
  if (!v) return o;
  using F = data_format_kind;
  std::string expected;
  for (F f : {F::idx, F::csv, F::libsvm, F::criteo}) {
    if (to_string(f) == v->text) {
      o.data_format = f;
      return o;
    }
    expected += (expected.empty() ? "" : "|") + to_string(f);
  }
  for (const std::string& name : formats.registered) {
    if (name == v->text) {
      o.data_format = F::registered;
      o.registered_format = name;
      return o;
    }
    expected += "|" + name;
  }
  bad_value(*v, "data-format", "is not valid", expected);
}

void check_input(const options& o, const raw_values& raw) {
  const bool idx = o.data_format == data_format_kind::idx;
  const bool in_memory = idx || o.data_format == data_format_kind::registered;
  if (const raw_value* v = find(raw, "input"); v && in_memory && o.input == input_kind::stream)
    throw config_error("config: " + label(*v, "input") + "=stream is for --data-format=csv, " +
                       "libsvm or criteo (" + (idx ? "IDX images are" : "a registered format is") +
                       " read into memory)");
  if (const raw_value* v = find(raw, "max-line-bytes"); v && idx)
    throw config_error("config: " + label(*v, "max-line-bytes") +
                       " is for --data-format=csv, libsvm or criteo");
  if (streams_input(o)) return;
  for (const char* name : {"shuffle-buffer", "passes"})
    if (const raw_value* v = find(raw, name))
      throw config_error("config: " + label(*v, name) +
                         " is for streamed input (--input=stream; libsvm and criteo files "
                         "stream unless --input=memory)");
}

}  // namespace config_detail

std::string to_string(input_kind k) {
  switch (k) {
    case input_kind::memory:
      return "memory";
    case input_kind::stream:
      return "stream";
    default:
      return "auto";
  }
}

std::string data_format_name(const options& o) {
  return o.data_format == data_format_kind::registered ? o.registered_format
                                                       : to_string(o.data_format);
}

bool streams_input(const options& o) {
  if (o.data_format == data_format_kind::idx || o.data_format == data_format_kind::registered ||
      o.input == input_kind::memory)
    return false;
  if (o.input == input_kind::stream) return true;
  return o.data_format == data_format_kind::libsvm || o.data_format == data_format_kind::criteo;
}

}  // namespace downpour
