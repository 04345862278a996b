#include "runtime/cli/row_arrays.hpp"

#include <algorithm>
#include <string>

#include "protocol/placement.hpp"

namespace downpour {
namespace {

std::vector<const char*> slot_names(update_rule rule) {
  switch (rule) {
    case update_rule::sgd:
      return {};
    case update_rule::momentum:
      return {"momentum"};
    case update_rule::adagrad:
      return {"accumulators"};
    case update_rule::adam:
      return {"m", "v"};
    case update_rule::ftrl:
      return {"accumulators", "linear"};
  }
  return {};
}

std::string shape_text(std::uint64_t rows, std::size_t cols) {
  return "[" + std::to_string(rows) + ", " + std::to_string(cols) + "]";
}

// The held keys of v: [a, b) of the checkpoint's keys.
std::pair<std::size_t, std::size_t> held_of(const std::vector<std::uint64_t>& keys,
                                            const row_variable_info& v) {
  const auto a = std::lower_bound(keys.begin(), keys.end(), v.first_key);
  const auto b = std::lower_bound(a, keys.end(), v.end_key());
  return {static_cast<std::size_t>(a - keys.begin()), static_cast<std::size_t>(b - keys.begin())};
}

}  // namespace

row_arrays row_arrays_of(const checkpoint& c) {
  row_arrays out;
  const auto& keys = c.rows.keys;
  const bool slots = !c.rows.accumulators.empty();
  std::size_t value = 0;
  std::size_t slot = 0;
  for (const auto& v : c.layout.row_variables()) {
    const auto [a, b] = held_of(keys, v);
    const std::size_t n = b - a;
    auto& rows = out.keys.emplace_back();
    for (std::size_t i = a; i < b; ++i) rows.push_back(keys[i] - v.first_key);
    out.arrays.push_back({v.name + "/keys", {n}, rows.data(), npy_dtype::u8});
    out.arrays.push_back({v.name + "/values", {n, v.cols}, c.rows.values.data() + value});
    value += n * v.cols;
    if (!slots) continue;
    const auto names = slot_names(v.update.rule);
    const std::size_t per_row = names.size() * v.cols;
    for (std::size_t s = 0; s < names.size(); ++s) {
      auto& block = out.floats.emplace_back();
      block.reserve(n * v.cols);
      for (std::size_t r = 0; r < n; ++r) {
        const float* from = c.rows.accumulators.data() + slot + r * per_row + s * v.cols;
        block.insert(block.end(), from, from + v.cols);
      }
      out.arrays.push_back({v.name + "/" + names[s], {n, v.cols}, block.data()});
    }
    slot += n * per_row;
  }
  return out;
}

void inspect_row_variables(const checkpoint_info& info, std::size_t ps, std::ostream& out) {
  const bool readable = info.checksum_ok();
  const auto keys = readable ? read_checkpoint(info.path).rows.keys : std::vector<std::uint64_t>{};
  std::uint64_t first = 0;
  for (auto v : info.row_variables) {
    v.first_key = first;
    first = v.end_key();
    const auto [a, b] = held_of(keys, v);
    const std::uint64_t held = readable ? b - a : info.rows_held;
    out << "variable: " << v.name << " rows shape=" << shape_text(v.rows, v.cols)
        << " update=" << to_string(v.update.rule);
    if (readable || info.row_variables.size() == 1) out << " rows_held=" << held;
    out << "\n";
  }
  if (!readable) return;
  const auto bounds = row_boundaries(first, std::max<std::size_t>(1, ps));
  for (std::size_t k = 0; k + 1 < bounds.size(); ++k) {
    const auto lo = std::lower_bound(keys.begin(), keys.end(), bounds[k]);
    const auto hi = std::lower_bound(keys.begin(), keys.end(), bounds[k + 1]);
    out << "rows: ps " << k << " [" << bounds[k] << ", " << bounds[k + 1] << ") holds "
        << (hi - lo) << "\n";
  }
}

}  // namespace downpour
