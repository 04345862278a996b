// The row variables' part of a checkpoint file (checkpoint_codec.hpp).
#include <stdexcept>

#include "model/row_tables.hpp"
#include "runtime/files/checkpoint_codec.hpp"

namespace downpour::checkpoint_codec {
namespace {

// Names are short; more means a damaged header, not a huge allocation.
constexpr u64 max_name_size = 256;
constexpr u64 max_row_variables = 4096;

void write_name(out_archive& ar, const std::string& s) {
  ar(u64(s.size()), cereal::binary_data(s.data(), s.size()));
}

std::string read_name(in_archive& ar) {
  u64 size = 0;
  ar(size);
  if (size > max_name_size) throw std::length_error("name too long");
  std::string s(size, '\0');
  ar(cereal::binary_data(s.data(), size));
  return s;
}

row_variable_info read_shape(in_archive& ar) {
  row_variable_info v;
  v.name = read_name(ar);
  u64 rows = 0, cols = 0;
  ar(rows, cols);
  v.rows = rows;
  v.cols = static_cast<std::size_t>(cols);
  return v;
}

std::string key_text(std::uint64_t key) { return "row " + std::to_string(key); }

}  // namespace

bool needs_row_format(const model_layout& layout) {
  const auto& vars = layout.row_variables();
  if (vars.size() > 1) return true;
  return !vars.empty() && vars.front().update.rule != update_rule::sgd &&
         vars.front().update.rule != update_rule::adagrad;
}

void write_row_variables(out_archive& ar, const model_layout& layout, std::uint32_t format) {
  const auto& vars = layout.row_variables();
  if (format >= 5) {
    ar(u64(vars.size()));
    for (const auto& v : vars) {
      write_name(ar, v.name);
      ar(u64(v.rows), u64(v.cols), static_cast<std::uint8_t>(v.update.rule));
    }
    return;
  }
  if (format >= 4) ar(std::uint8_t{!vars.empty()});
  if (vars.empty()) return;
  write_name(ar, vars.front().name);
  ar(u64(vars.front().rows), u64(vars.front().cols));
}

std::vector<row_variable_info> read_row_variables(in_archive& ar, std::uint32_t format) {
  std::vector<row_variable_info> vars;
  if (format >= 5) {
    u64 n = 0;
    ar(n);
    if (n > max_row_variables) throw std::length_error("too many row variables");
    for (u64 i = 0; i < n; ++i) {
      vars.push_back(read_shape(ar));
      std::uint8_t rule = 0;
      ar(rule);
      if (rule > static_cast<std::uint8_t>(update_rule::ftrl)) throw std::domain_error("bad rule");
      vars.back().update.rule = static_cast<update_rule>(rule);
    }
    return vars;
  }
  bool rows = format == 3;  // format 3 always has one; format 4 says whether
  if (format >= 4) {
    std::uint8_t flag = 0;
    ar(flag);
    if (flag > 1) throw std::domain_error("bad flag");
    rows = flag != 0;
  }
  if (rows) vars.push_back(read_shape(ar));
  return vars;
}

std::string row_contents_problem(const checkpoint& c) {
  const auto& keys = c.rows.keys;
  const row_tables_spec spec = row_tables_of(c.layout, 0);
  for (std::size_t i = 0; i < keys.size(); ++i)
    if ((i > 0 && keys[i] <= keys[i - 1]) || keys[i] >= spec.keys())
      return "its sparse rows are not stored by ascending key below the row count (" +
             key_text(keys[i]) + ")";
  const std::size_t values = spec.values_for(keys);
  const std::size_t slots = spec.slots_for(keys);
  const std::size_t got = c.rows.accumulators.size();
  if (c.rows.values.size() != values || (got != 0 && got != slots))
    return "holds " + std::to_string(keys.size()) + " rows with " +
           std::to_string(c.rows.values.size()) + " values and " + std::to_string(got) +
           " slots, which do not fit its row variables (" + std::to_string(values) +
           " values, " + std::to_string(slots) + " slots or none)";
  return {};
}

}  // namespace downpour::checkpoint_codec
