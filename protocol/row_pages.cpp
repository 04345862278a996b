#include "protocol/row_pages.hpp"

#include <algorithm>
#include <string>

#include "config/checked_size.hpp"

namespace downpour {

std::uint64_t row_wire_bytes(std::uint64_t cols) {
  return checked_add(sizeof(std::uint64_t),
                     checked_mul(2 * sizeof(float), cols, "bytes of a row"), "bytes of a row");
}

std::uint64_t rows_per_page(std::uint64_t cols) {
  return std::max<std::uint64_t>(1, kRowPageBytes / row_wire_bytes(cols));
}

std::uint64_t row_message_bound(std::uint64_t n, std::uint64_t cols) {
  if (n == 0) return 0;
  const std::uint64_t row = row_wire_bytes(cols);
  const std::uint64_t page = checked_mul(rows_per_page(cols), row, "bytes of a page of rows");
  const std::uint64_t batch = std::max<std::uint64_t>(1, kRowMessageBytes / row);
  const std::uint64_t rows = std::min(n, batch);
  return std::max(page, checked_mul(rows, row, "bytes of a row message"));
}

std::uint64_t page_count(std::uint64_t rows, std::uint64_t page_rows) {
  return rows / page_rows + (rows % page_rows != 0 ? 1 : 0);
}

row_part page_of(const row_part& part, std::uint64_t page, std::uint64_t page_rows) {
  const std::size_t n = part.keys.size();
  const std::size_t a = static_cast<std::size_t>(std::min<std::uint64_t>(n, page * page_rows));
  const std::size_t b = static_cast<std::size_t>(std::min<std::uint64_t>(n, a + page_rows));
  const std::size_t cols = n == 0 ? 0 : part.values.values.size() / n;
  const std::size_t acc = n == 0 ? 0 : part.accumulators.values.size() / n;
  row_part out;
  out.first = part.first;
  out.last = part.last;
  out.keys.keys.assign(part.keys.keys.begin() + a, part.keys.keys.begin() + b);
  const auto& v = part.values.values;
  out.values.values.assign(v.begin() + a * cols, v.begin() + b * cols);
  const auto& c = part.accumulators.values;
  out.accumulators.values.assign(c.begin() + a * acc, c.begin() + b * acc);
  return out;
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
  const auto per_row = [](const tensor& t, std::size_t rows) {
    return rows == 0 ? std::size_t{0} : t.values.size() / rows;
  };
  if (!keys.empty() && page.keys.size() > 0 &&
      (per_row(part.values, keys.size()) != per_row(page.values, page.keys.size()) ||
       per_row(part.accumulators, keys.size()) != per_row(page.accumulators, page.keys.size())))
    return caf::make_error(errc::shape_mismatch, "a page of rows of another width");
  keys.insert(keys.end(), page.keys.keys.begin(), page.keys.keys.end());
  auto& v = part.values.values;
  v.insert(v.end(), page.values.values.begin(), page.values.values.end());
  auto& c = part.accumulators.values;
  c.insert(c.end(), page.accumulators.values.begin(), page.accumulators.values.end());
  return caf::none;
}

}  // namespace downpour
