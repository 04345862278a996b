#include "model/row_tables.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "model/update.hpp"

namespace downpour {
namespace {

std::size_t checked_sum(std::size_t a, std::uint64_t n, std::size_t width) {
  std::size_t add = 0;
  if (__builtin_mul_overflow(n, width, &add) || __builtin_add_overflow(a, add, &a))
    throw std::length_error("row values overflow a size");
  return a;
}

// The slice [a, b) of a run of n-float items.
std::vector<float> slice(const std::vector<float>& v, std::size_t a, std::size_t b) {
  return std::vector<float>(v.begin() + static_cast<std::ptrdiff_t>(a),
                            v.begin() + static_cast<std::ptrdiff_t>(b));
}

}  // namespace

std::size_t row_tables_spec::table_of(std::uint64_t key) const {
  const auto it = std::upper_bound(
      tables.begin(), tables.end(), key,
      [](std::uint64_t k, const sparse_table_spec& t) { return k < t.end_key(); });
  return static_cast<std::size_t>(it - tables.begin());
}

std::size_t row_tables_spec::values_for(const std::uint64_t* first,
                                        const std::uint64_t* last) const {
  std::size_t total = 0;
  for (const auto& t : tables) {
    const auto* a = std::lower_bound(first, last, t.first_key);
    const auto* b = std::lower_bound(a, last, t.end_key());
    total = checked_sum(total, static_cast<std::uint64_t>(b - a), t.dim);
  }
  return total;
}

std::size_t row_tables_spec::slots_for(const std::uint64_t* first,
                                       const std::uint64_t* last) const {
  std::size_t total = 0;
  for (const auto& t : tables) {
    const auto* a = std::lower_bound(first, last, t.first_key);
    const auto* b = std::lower_bound(a, last, t.end_key());
    total = checked_sum(total, static_cast<std::uint64_t>(b - a), t.slots());
  }
  return total;
}

std::size_t row_tables_spec::widest_row() const {
  std::size_t widest = 0;
  for (const auto& t : tables) widest = std::max(widest, t.dim + t.slots());
  return widest;
}

row_tables_spec row_tables_of(const model_layout& layout, std::uint64_t seed) {
  row_tables_spec spec;
  for (const auto& v : layout.row_variables()) {
    sparse_table_spec t;
    t.rows = v.rows;
    t.dim = v.cols;
    t.init = v.init;
    t.init_seed = seed;
    t.update = v.update;
    t.reg = v.reg;
    t.first_key = v.first_key;
    spec.tables.push_back(t);
  }
  return spec;
}

row_tables::row_tables(const row_tables_spec& spec) : spec_(spec) {
  std::uint64_t next = 0;
  for (const auto& t : spec.tables) {
    if (t.first_key != next)
      throw std::invalid_argument("row tables: a table from key " + std::to_string(t.first_key) +
                                  " after keys up to " + std::to_string(next));
    tables_.emplace_back(t);
    next = t.end_key();
  }
}

std::uint64_t row_tables::rows_held() const {
  std::uint64_t n = 0;
  for (const auto& t : tables_) n += t.rows_held();
  return n;
}

std::size_t row_tables::bytes_used() const {
  std::size_t n = 0;
  for (const auto& t : tables_) n += t.bytes_used();
  return n;
}

std::vector<std::size_t> row_tables::cuts(const std::vector<std::uint64_t>& keys) const {
  std::vector<std::size_t> at(tables_.size() + 1, keys.size());
  at[0] = 0;
  for (std::size_t t = 1; t < tables_.size(); ++t)
    at[t] = static_cast<std::size_t>(
        std::lower_bound(keys.begin(), keys.end(), spec_.tables[t].first_key) - keys.begin());
  return at;
}

std::optional<sparse_refusal> row_tables::check_keys(const std::vector<std::uint64_t>& keys) const {
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (keys[i] >= spec_.keys()) return sparse_refusal::key_out_of_range;
    if (i > 0 && keys[i] == keys[i - 1]) return sparse_refusal::duplicate_key;
    if (i > 0 && keys[i] < keys[i - 1]) return sparse_refusal::keys_not_ascending;
  }
  return std::nullopt;
}

std::vector<float> row_tables::pull(const std::vector<std::uint64_t>& keys) const {
  if (const auto why = check_keys(keys))
    throw std::invalid_argument(std::string("row tables: pull of refused keys: ") +
                                to_string(*why));
  std::vector<float> values(spec_.values_for(keys));
  read(keys, values.data());
  return values;
}

std::vector<row_ref> row_tables::read(const std::vector<std::uint64_t>& keys, float* into) const {
  if (tables_.size() == 1) return tables_.front().read(keys.data(), keys.size(), into);
  const auto cut = cuts(keys);
  std::vector<row_ref> refs;
  refs.reserve(keys.size());
  for (std::size_t t = 0; t < tables_.size(); ++t) {
    const std::size_t n = cut[t + 1] - cut[t];
    if (n == 0) continue;
    const auto part = tables_[t].read(keys.data() + cut[t], n, into);
    refs.insert(refs.end(), part.begin(), part.end());
    into += n * spec_.tables[t].dim;
  }
  return refs;
}

std::optional<sparse_refusal> row_tables::push(const keyed_rows& gradient, update_moment at) {
  if (tables_.size() == 1) return tables_.front().push(gradient, at);
  std::optional<sparse_refusal> why = check_keys(gradient.keys);
  if (!why && gradient.values.size() != spec_.values_for(gradient.keys))
    why = sparse_refusal::value_count;
  if (!why && !all_finite(gradient.values.data(), gradient.values.size()))
    why = sparse_refusal::not_finite;
  if (why) {
    ++refused_[static_cast<std::size_t>(*why)];
    return why;
  }
  apply(gradient.keys, {}, gradient.values.data(), at);
  return std::nullopt;
}

void row_tables::apply(const std::vector<std::uint64_t>& keys, const std::vector<row_ref>& refs,
                       const float* gradient, update_moment at) {
  const auto cut = cuts(keys);
  for (std::size_t t = 0; t < tables_.size(); ++t) {
    const std::size_t n = cut[t + 1] - cut[t];
    if (n == 0) continue;
    tables_[t].apply(keys.data() + cut[t], refs.empty() ? nullptr : refs.data() + cut[t], n,
                     gradient, at);
    gradient += n * spec_.tables[t].dim;
  }
}

std::uint64_t row_tables::refused(sparse_refusal why) const {
  std::uint64_t n = refused_[static_cast<std::size_t>(why)];
  for (const auto& t : tables_) n += t.refused(why);
  return n;
}

row_dump row_tables::dump(std::uint64_t first, std::uint64_t last) const {
  row_dump all;
  for (const auto& t : tables_) {
    const auto& s = t.spec();
    if (s.end_key() <= first || s.first_key >= last) continue;
    row_dump part = t.dump(std::max(first, s.first_key), std::min(last, s.end_key()));
    all.keys.insert(all.keys.end(), part.keys.begin(), part.keys.end());
    all.values.insert(all.values.end(), part.values.begin(), part.values.end());
    all.accumulators.insert(all.accumulators.end(), part.accumulators.begin(),
                            part.accumulators.end());
  }
  return all;
}

void row_tables::load(const row_dump& rows) {
  if (tables_.size() == 1) return tables_.front().load(rows);
  if (const auto why = check_keys(rows.keys))
    throw std::invalid_argument(std::string("row tables: load of refused keys: ") +
                                to_string(*why));
  const std::size_t values = spec_.values_for(rows.keys);
  const std::size_t slots = spec_.slots_for(rows.keys);
  if (rows.values.size() != values || (!rows.accumulators.empty() && rows.accumulators.size() != slots))
    throw std::invalid_argument("row tables: load of " + std::to_string(rows.values.size()) +
                                " values and " + std::to_string(rows.accumulators.size()) +
                                " slots for rows of " + std::to_string(values) + " and " +
                                std::to_string(slots));
  const auto cut = cuts(rows.keys);
  std::size_t value = 0, slot = 0;
  for (std::size_t t = 0; t < tables_.size(); ++t) {
    row_dump part;
    part.keys.assign(rows.keys.begin() + static_cast<std::ptrdiff_t>(cut[t]),
                     rows.keys.begin() + static_cast<std::ptrdiff_t>(cut[t + 1]));
    const std::size_t n = part.keys.size() * spec_.tables[t].dim;
    const std::size_t m = rows.accumulators.empty() ? 0 : part.keys.size() * spec_.tables[t].slots();
    part.values = slice(rows.values, value, value + n);
    part.accumulators = slice(rows.accumulators, slot, slot + m);
    value += n;
    slot += m;
    tables_[t].load(part);
  }
}

keyed_rows row_tables::mean_per_row(const std::vector<keyed_rows>& gradients) const {
  if (tables_.size() == 1) return downpour::mean_per_row(gradients, spec_.tables.front().dim);
  keyed_rows mean;
  for (std::size_t t = 0; t < tables_.size(); ++t) {
    std::vector<keyed_rows> parts;
    for (const auto& g : gradients) {
      const auto cut = cuts(g.keys);
      const std::size_t before = spec_.values_for(g.keys.data(), g.keys.data() + cut[t]);
      const std::size_t n = (cut[t + 1] - cut[t]) * spec_.tables[t].dim;
      parts.push_back({std::vector<std::uint64_t>(g.keys.begin() + static_cast<std::ptrdiff_t>(cut[t]),
                                                  g.keys.begin() + static_cast<std::ptrdiff_t>(cut[t + 1])),
                       slice(g.values, before, before + n)});
    }
    const keyed_rows m = downpour::mean_per_row(parts, spec_.tables[t].dim);
    mean.keys.insert(mean.keys.end(), m.keys.begin(), m.keys.end());
    mean.values.insert(mean.values.end(), m.values.begin(), m.values.end());
  }
  return mean;
}

}  // namespace downpour
