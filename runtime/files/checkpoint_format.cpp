// The file format; runtime/files/checkpoint.cpp keeps the directory.
#include <algorithm>
#include <cereal/archives/portable_binary.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "io/input_file.hpp"
#include "model/dense_rules.hpp"
#include "model/mlp_spec.hpp"
#include "runtime/files/checkpoint.hpp"
#include "runtime/files/checkpoint_codec.hpp"

namespace downpour {
namespace {

using namespace checkpoint_codec;
// magic, the archive's endianness byte, version, payload length, CRC.
constexpr std::size_t preamble_size = magic_size + 1 + 4 + 8 + 4;
// Names are short and models have few variables; more means a damaged
// header, not a huge allocation.
constexpr u64 max_name_size = 256;
constexpr u64 max_variables = 4096;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw checkpoint_error("checkpoint: " + path + ": " + what);
}

std::string hex(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", static_cast<unsigned>(v));
  return buf;
}

bool known_mode(const std::string& m) {
  return m == "async" || m == "sync" || m == "ssp";
}

std::string read_name(in_archive& ar) {
  u64 size = 0;
  ar(size);
  if (size > max_name_size) throw std::length_error("name too long");
  std::string s(size, '\0');
  ar(cereal::binary_data(s.data(), size));
  return s;
}

void read_positions(in_archive& ar, std::vector<worker_position>& positions) {
  for (auto& p : positions)
    ar(p.worker, p.at.plan, p.at.pass, p.at.unit, p.at.offset, p.at.taken, p.at.batches,
       p.at.examples);
}

template <class T>
void read_array(in_archive& ar, std::vector<T>& v) {
  ar(cereal::binary_data(v.data(), v.size() * sizeof(T)));
}

// Parses a part of the file in place: a checkpoint is megabytes, not worth copying.
class view_buffer : public std::streambuf {
 public:
  explicit view_buffer(const std::string& bytes) {
    char* begin = const_cast<char*>(bytes.data());
    setg(begin, begin, begin + bytes.size());
  }
};

// Magic, version and length, checked against the file's size before
// anything else is read: a file grown past its payload (or cut short) is
// refused in O(1), whatever its size. head: the first bytes of the file.
checkpoint_info read_preamble(const std::string& path, const std::string& head,
                              std::uint64_t file_bytes) {
  if (head.compare(0, magic_size, magic, std::min(head.size(), magic_size)) != 0)
    fail(path, "not a Downpour checkpoint (no DOWNPOUR-CKPT magic)");
  if (file_bytes < preamble_size)
    fail(path, "truncated: " + std::to_string(file_bytes) + " bytes, shorter than the header");
  checkpoint_info info;
  info.path = path;
  info.file_bytes = file_bytes;
  const std::string after_magic = head.substr(magic_size);
  view_buffer buffer(after_magic);
  std::istream in(&buffer);
  in_archive ar(in);
  ar(info.format_version, info.payload_bytes, info.stored_checksum);
  if (info.format_version < oldest_checkpoint_format_version ||
      info.format_version > checkpoint_format_version)
    fail(path, "format version " + std::to_string(info.format_version) +
                   " is not supported (this build reads " +
                   std::to_string(oldest_checkpoint_format_version) + " to " +
                   std::to_string(checkpoint_format_version) + ")");
  u64 have = file_bytes - preamble_size;
  if (have < info.payload_bytes)
    fail(path, "truncated: " + std::to_string(have) + " of " + std::to_string(info.payload_bytes) +
                   " payload bytes");
  if (have > info.payload_bytes)
    fail(path, std::to_string(have - info.payload_bytes) + " unexpected bytes after the payload");
  // The payload opens with its archive's endianness byte; without it there is
  // nothing to parse (and the archive would throw its own exception type).
  if (info.payload_bytes == 0) fail(path, "truncated: the payload is empty");
  return info;
}

// A checkpoint file's preamble and payload. Opened as a regular file only (a
// FIFO or a device is refused, never waited on: io/input_file.hpp), and the
// payload is read only once its length agrees with the file's size.
struct checkpoint_bytes {
  checkpoint_info info;
  std::string payload;
};

checkpoint_bytes read_file(const std::string& path) {
  try {
    const input_file file(path);
    const std::string head =
        file.read_at(0, static_cast<std::size_t>(std::min<u64>(file.size(), preamble_size)));
    checkpoint_bytes bytes{read_preamble(path, head, file.size()), {}};
    bytes.payload =
        file.read_at(preamble_size, static_cast<std::size_t>(bytes.info.payload_bytes));
    bytes.info.computed_checksum = crc_of(bytes.payload.data(), bytes.payload.size());
    return bytes;
  } catch (const input_error& e) {
    fail(path, e.reason());
  }
}

// What the header says besides the checkpoint_info.
struct array_counts {
  u64 params = 0;
  u64 ema = 0;
  u64 keys = 0, row_values = 0, row_accumulators = 0;  // format 3, or 4 with rows
  u64 positions = 0;                                   // format 4
  u64 slots = 0;                                       // format 6: the dense slots
  std::optional<mlp_spec> format1_mlp;  // format 1: the MLP its sizes name
};

// Format 1 named the MLP by its three sizes.
struct model_name {
  std::string kind, spec;
  std::optional<mlp_spec> format1_mlp;
};

model_name read_model_name(in_archive& ar, std::uint32_t format_version) {
  if (format_version == 1) {
    u64 input = 0, hidden = 0, classes = 0;
    ar(input, hidden, classes);
    const mlp_spec mlp{input, {hidden}, classes};
    return {"mlp", mlp.text(), mlp};
  }
  std::string kind = read_name(ar);
  return {std::move(kind), read_name(ar), std::nullopt};
}

update_rule read_rule(in_archive& ar) {
  std::uint8_t rule = 0;
  ar(rule);
  if (rule > static_cast<std::uint8_t>(update_rule::ftrl)) throw std::domain_error("bad rule");
  return static_cast<update_rule>(rule);
}

array_counts read_header(in_archive& ar, checkpoint_info& info) {
  model_name name = read_model_name(ar, info.format_version);
  info.kind = std::move(name.kind);
  info.spec = std::move(name.spec);
  array_counts counts;
  counts.format1_mlp = name.format1_mlp;
  u64 nvars = 0;
  ar(nvars);
  if (nvars > max_variables) throw std::length_error("too many variables");
  for (u64 i = 0; i < nvars; ++i) {
    variable_info v;
    v.name = read_name(ar);
    u64 offset = 0, rows = 0, cols = 0;
    // A bool is one byte on disk; any other value than 0 or 1 is damage, and
    // loading it straight into a bool would be undefined behaviour.
    std::uint8_t regularized = 0;
    ar(offset, rows, cols, regularized);
    if (regularized > 1) throw std::domain_error("bad flag");
    v.offset = offset, v.rows = rows, v.cols = cols, v.regularized = regularized != 0;
    if (info.format_version >= 6) v.update.rule = read_rule(ar);
    info.variables.push_back(v);
  }
  info.row_variables = read_row_variables(ar, info.format_version);
  const bool rows = !info.row_variables.empty();
  ar(info.global_step);
  info.mode = read_name(ar);
  ar(info.wall_time, counts.params, counts.ema);
  if (rows) ar(counts.keys, counts.row_values, counts.row_accumulators);
  // Formats 3 and 4 kept AdaGrad's accumulators, or no slots for SGD.
  if (rows && info.format_version < 5 && counts.row_accumulators != 0)
    info.row_variables.front().update.rule = update_rule::adagrad;
  if (info.format_version >= 4) ar(counts.positions);
  if (info.format_version >= 6) ar(counts.slots);
  info.rows_held = counts.keys;
  info.positions = counts.positions;
  info.dense_slots = counts.slots;
  return counts;
}

bool same_variables(const std::vector<variable_info>& a, const std::vector<variable_info>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
    return x.name == y.name && x.offset == y.offset && x.rows == y.rows && x.cols == y.cols &&
           x.regularized == y.regularized;
  });
}

// Parses what read_preamble left; the payload itself may be damaged.
array_counts parse_header(in_archive& ar, checkpoint_info& info) {
  try {
    return read_header(ar, info);
  } catch (const std::exception&) {
    fail(info.path, std::string("cannot parse the header") +
                        (info.checksum_ok() ? "" : " (checksum mismatch)"));
  }
}

// The model the header names; its variables must be laid out as a model
// declares them (and, in format 1, be the MLP's). Sizes that overflow are
// refused by model_layout: they would otherwise pass as a small size().
bool is_mlp(const model_layout& layout, const mlp_spec& spec) {
  try {
    return layout == spec.layout("mlp");
  } catch (const std::invalid_argument&) {
    return false;  // sizes that overflow
  }
}

model_layout layout_of(const checkpoint_info& info, const array_counts& counts) {
  std::vector<variable_spec> specs;
  for (const auto& v : info.variables)
    specs.push_back({.name = v.name,
                     .rows = v.rows,
                     .cols = v.cols,
                     .regularized = v.regularized,
                     .update = {.rule = v.update.rule}});
  for (const auto& v : info.row_variables)
    specs.push_back({.name = v.name,
                     .rows = v.rows,
                     .cols = v.cols,
                     .store = storage::rows,
                     .update = {.rule = v.update.rule}});
  model_layout layout;
  try {
    layout = model_layout(info.kind, info.spec, specs);
  } catch (const std::invalid_argument& e) {
    fail(info.path, std::string("its variables are not valid: ") + e.what());
  }
  if (!same_variables(info.variables, layout.variables()))
    fail(info.path, "its variables' offsets do not follow from their shapes");
  if (counts.format1_mlp && !is_mlp(layout, *counts.format1_mlp))
    fail(info.path, "its variables do not match a " + info.spec + " model");
  return layout;
}

// The row variables' arrays, all of it inside the payload (each key's
// widths are checked once the keys are read: row_contents_problem).
void check_row_counts(const checkpoint_info& info, const array_counts& counts) {
  if (counts.keys == 0 && counts.row_values == 0 && counts.row_accumulators == 0) return;
  const u64 floats = info.payload_bytes / sizeof(float);
  if (info.row_variables.empty() || counts.keys > info.payload_bytes / sizeof(u64) ||
      counts.row_values > floats || counts.row_accumulators > floats)
    fail(info.path, "holds " + std::to_string(counts.keys) + " rows with " +
                        std::to_string(counts.row_values) +
                        " values, which do not fit its row variables or its payload");
}

// The payload passed its checksum; this catches a writer that broke the format.
model_layout check_contents(const checkpoint_info& info, const array_counts& counts) {
  model_layout layout = layout_of(info, counts);
  if (counts.params != layout.size() || counts.ema != layout.size())
    fail(info.path, "holds " + std::to_string(counts.params) + " parameters and " +
                        std::to_string(counts.ema) + " shadows, " + layout.to_string() +
                        " has " + std::to_string(layout.size()));
  if (!known_mode(info.mode)) fail(info.path, "unknown mode '" + info.mode + "'");
  if (counts.params > info.payload_bytes / (2 * sizeof(float)) ||
      counts.positions > info.payload_bytes / position_bytes)
    fail(info.path, "the payload is too short for its arrays");
  check_row_counts(info, counts);
  if (counts.slots != 0 && counts.slots != whole_slot_count(layout.variables()))
    fail(info.path, "holds " + std::to_string(counts.slots) + " dense slots, its variables' rules have " +
                        std::to_string(whole_slot_count(layout.variables())));
  if (counts.slots > info.payload_bytes / sizeof(float))
    fail(info.path, "the payload is too short for its arrays");
  return layout;
}

}  // namespace

std::string checkpoint_name(std::int64_t global_step) {
  return "model.ckpt-" + std::to_string(global_step);
}

std::vector<std::size_t> tf_shape(const variable_info& v) {
  if (v.rows == 1 && !v.regularized) return {v.cols};
  return {v.rows, v.cols};
}

checkpoint_info inspect_checkpoint(const std::string& path) {
  checkpoint_bytes bytes = read_file(path);
  view_buffer buffer(bytes.payload);
  std::istream in(&buffer);
  in_archive ar(in);
  parse_header(ar, bytes.info);
  return bytes.info;
}

checkpoint read_checkpoint(const std::string& path) {
  checkpoint_bytes bytes = read_file(path);
  checkpoint_info& info = bytes.info;
  if (!info.checksum_ok())
    fail(path, "checksum mismatch (stored " + hex(info.stored_checksum) + ", computed " +
                   hex(info.computed_checksum) + ")");
  view_buffer buffer(bytes.payload);
  std::istream in(&buffer);
  in_archive ar(in);
  array_counts counts = parse_header(ar, info);
  checkpoint c{check_contents(info, counts),
               info.global_step,
               info.mode,
               info.wall_time,
               std::vector<float>(counts.params),
               std::vector<float>(counts.ema),
               {},
               {},
               {}};
  c.rows.keys.resize(counts.keys);
  c.rows.values.resize(counts.row_values);
  c.rows.accumulators.resize(counts.row_accumulators);
  c.positions.resize(counts.positions);
  c.slots.resize(counts.slots);
  try {
    read_array(ar, c.params);
    read_array(ar, c.ema);
    read_array(ar, c.rows.keys);
    read_array(ar, c.rows.values);
    read_array(ar, c.rows.accumulators);
    read_positions(ar, c.positions);
    read_array(ar, c.slots);
  } catch (const std::exception&) {
    fail(path, "the payload ends inside the arrays");
  }
  if (in.peek() != std::char_traits<char>::eof()) fail(path, "unexpected bytes after the arrays");
  if (const std::string problem = row_contents_problem(c); !problem.empty()) fail(path, problem);
  return c;
}

}  // namespace downpour
