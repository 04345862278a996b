#include "protocol/row_pages.hpp"

#include <algorithm>
#include <string>

#include "config/checked_size.hpp"

namespace downpour {
namespace {

std::uint64_t row_bytes(std::uint64_t values, std::uint64_t slots) {
  const std::uint64_t floats = checked_add(values, std::max(values, slots), "floats of a row");
  return checked_add(sizeof(std::uint64_t), checked_mul(sizeof(float), floats, "bytes of a row"),
                     "bytes of a row");
}

std::uint64_t page_rows_of(std::uint64_t row) {
  return std::max<std::uint64_t>(1, kRowPageBytes / row);
}

std::uint64_t message_bound(std::uint64_t n, std::uint64_t row) {
  if (n == 0) return 0;
  const std::uint64_t page = checked_mul(page_rows_of(row), row, "bytes of a page of rows");
  const std::uint64_t batch = std::max<std::uint64_t>(1, kRowMessageBytes / row);
  const std::uint64_t rows = std::min(n, batch);
  return std::max(page, checked_mul(rows, row, "bytes of a row message"));
}

}  // namespace

std::uint64_t row_wire_bytes(std::uint64_t cols) { return row_bytes(cols, cols); }

std::uint64_t row_wire_bytes(const row_tables_spec& spec) {
  std::uint64_t widest = row_bytes(1, 1);
  for (const auto& t : spec.tables) widest = std::max(widest, row_bytes(t.dim, t.slots()));
  return widest;
}

std::uint64_t rows_per_page(std::uint64_t cols) { return page_rows_of(row_wire_bytes(cols)); }

std::uint64_t rows_per_page(const row_tables_spec& spec) {
  return page_rows_of(row_wire_bytes(spec));
}

std::uint64_t row_message_bound(std::uint64_t n, std::uint64_t cols) {
  return message_bound(n, row_wire_bytes(cols));
}

std::uint64_t row_message_bound(const row_tables_spec& spec) {
  return message_bound(spec.keys(), row_wire_bytes(spec));
}

std::uint64_t page_count(std::uint64_t rows, std::uint64_t page_rows) {
  return rows / page_rows + (rows % page_rows != 0 ? 1 : 0);
}

row_part page_of(const row_part& part, std::uint64_t page, std::uint64_t page_rows,
                 const row_tables_spec& spec) {
  const std::size_t n = part.keys.size();
  const std::size_t a = static_cast<std::size_t>(std::min<std::uint64_t>(n, page * page_rows));
  const std::size_t b = static_cast<std::size_t>(std::min<std::uint64_t>(n, a + page_rows));
  const std::uint64_t* keys = part.keys.keys.data();
  const bool slots = !part.accumulators.values.empty();
  row_part out;
  out.first = part.first;
  out.last = part.last;
  out.keys.keys.assign(keys + a, keys + b);
  const auto& v = part.values.values;
  const std::size_t va = spec.values_for(keys, keys + a);
  out.values.values.assign(v.begin() + va, v.begin() + va + spec.values_for(keys + a, keys + b));
  if (slots) {
    const auto& c = part.accumulators.values;
    const std::size_t sa = spec.slots_for(keys, keys + a);
    out.accumulators.values.assign(c.begin() + sa,
                                   c.begin() + sa + spec.slots_for(keys + a, keys + b));
  }
  return out;
}

caf::error check_page(const row_part& page, const row_tables_spec& spec) {
  const auto& keys = page.keys.keys;
  if (!keys.empty() && keys.back() >= spec.keys())
    return caf::make_error(errc::bad_keys, "a page of rows up to row " +
                                               std::to_string(keys.back()) + " of " +
                                               std::to_string(spec.keys()));
  const std::size_t values = spec.values_for(keys);
  const std::size_t slots = spec.slots_for(keys);
  const std::size_t got = page.accumulators.values.size();
  if (page.values.values.size() != values || (got != 0 && got != slots))
    return caf::make_error(errc::shape_mismatch,
                           "a page of " + std::to_string(keys.size()) + " rows with " +
                               std::to_string(page.values.values.size()) + " values and " +
                               std::to_string(got) + " slots (expected " + std::to_string(values) +
                               " values and " + std::to_string(slots) + " slots or none)");
  return caf::none;
}

caf::error append_page(row_part& part, row_part& page) {
  if (page.first != part.first || page.last != part.last)
    return caf::make_error(errc::shape_mismatch,
                           "a page of rows [" + std::to_string(page.first) + ", " +
                               std::to_string(page.last) + ") after rows [" +
                               std::to_string(part.first) + ", " + std::to_string(part.last) + ")");
  auto& keys = part.keys.keys;
  if (!keys.empty() && page.keys.size() > 0 && page.keys.keys.front() <= keys.back())
    return caf::make_error(errc::bad_keys, "a page of rows starting at row " +
                                               std::to_string(page.keys.keys.front()) +
                                               " after row " + std::to_string(keys.back()));
  if (!keys.empty() && page.keys.size() > 0 &&
      part.accumulators.values.empty() != page.accumulators.values.empty())
    return caf::make_error(errc::shape_mismatch, "a page of rows with slots after one without");
  keys.insert(keys.end(), page.keys.keys.begin(), page.keys.keys.end());
  auto& v = part.values.values;
  v.insert(v.end(), page.values.values.begin(), page.values.values.end());
  auto& c = part.accumulators.values;
  c.insert(c.end(), page.accumulators.values.begin(), page.accumulators.values.end());
  return caf::none;
}

}  // namespace downpour
