// Writing a checkpoint file; runtime/files/checkpoint_format.cpp reads it.
#include <sstream>

#include "runtime/files/checkpoint.hpp"
#include "runtime/files/checkpoint_codec.hpp"

namespace downpour {
namespace {

using namespace checkpoint_codec;

void write_name(out_archive& ar, const std::string& s) {
  ar(u64(s.size()), cereal::binary_data(s.data(), s.size()));
}

std::uint32_t format_of(const checkpoint& c) {
  if (!c.slots.empty()) return checkpoint_format_version;
  if (!c.positions.empty() || needs_row_format(c.layout)) return rows_checkpoint_format_version;
  return c.layout.row_variables().empty() ? dense_checkpoint_format_version
                                          : sparse_checkpoint_format_version;
}

void write_positions(out_archive& ar, const std::vector<worker_position>& positions) {
  for (const auto& p : positions)
    ar(p.worker, p.at.plan, p.at.pass, p.at.unit, p.at.offset, p.at.taken, p.at.batches,
       p.at.examples);
}

template <class T>
void write_array(out_archive& ar, const std::vector<T>& v) {
  ar(cereal::binary_data(v.data(), v.size() * sizeof(T)));
}

std::string encode_payload(const checkpoint& c) {
  const std::uint32_t format = format_of(c);
  const bool rows = !c.layout.row_variables().empty();
  std::ostringstream os(std::ios::binary);
  {
    out_archive ar(os);
    write_name(ar, c.layout.kind());
    write_name(ar, c.layout.spec());
    const auto& vars = c.layout.variables();
    ar(u64(vars.size()));
    for (const auto& v : vars) {
      write_name(ar, v.name);
      ar(u64(v.offset), u64(v.rows), u64(v.cols), v.regularized);
      if (format >= 6) ar(static_cast<std::uint8_t>(v.update.rule));
    }
    write_row_variables(ar, c.layout, format);
    ar(c.global_step);
    write_name(ar, c.mode);
    ar(c.wall_time, u64(c.params.size()), u64(c.ema.size()));
    if (rows)
      ar(u64(c.rows.keys.size()), u64(c.rows.values.size()), u64(c.rows.accumulators.size()));
    if (format >= 4) ar(u64(c.positions.size()));
    if (format >= 6) ar(u64(c.slots.size()));
    write_array(ar, c.params);
    write_array(ar, c.ema);
    if (rows) {
      write_array(ar, c.rows.keys);
      write_array(ar, c.rows.values);
      write_array(ar, c.rows.accumulators);
    }
    write_positions(ar, c.positions);
    write_array(ar, c.slots);
  }
  return os.str();
}

}  // namespace

std::string encode_checkpoint(const checkpoint& c) {
  std::string payload = encode_payload(c);
  std::ostringstream os(std::ios::binary);
  os.write(magic, magic_size);
  {
    out_archive ar(os);
    ar(format_of(c), u64(payload.size()), crc_of(payload.data(), payload.size()));
  }
  os.write(payload.data(), static_cast<std::streamsize>(payload.size()));
  return os.str();
}

}  // namespace downpour
