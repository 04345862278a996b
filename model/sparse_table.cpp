#include "model/sparse_table.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "model/sparse_hash.hpp"
#include "model/update.hpp"

namespace downpour {
namespace {

// No valid key reaches it: keys are below N <= 2^63.
constexpr std::uint64_t kEmpty = std::numeric_limits<std::uint64_t>::max();
constexpr std::uint64_t kMaxRows = std::uint64_t{1} << 63;
constexpr std::size_t kFirstSlots = 16;
// Linear probing stays short up to this load; above it the slots double.
constexpr double kMaxLoad = 0.7;
constexpr unsigned kMaxChunkBits = 16;
// The keys of a pull or push are spread over the whole table, so each lookup
// misses the cache on its slot and on its row. Prefetching the slot of the
// key 2 * kAhead on and the row of the key kAhead on overlaps those misses.
constexpr std::size_t kAhead = 16;

unsigned chunk_bits_for(std::uint64_t rows) {
  unsigned bits = 0;
  while (bits < kMaxChunkBits && (std::uint64_t{1} << bits) < rows) ++bits;
  return bits;
}

// tf.truncated_normal_initializer's draw (beyond 2 stddev redrawn), from a
// hash of the row's identity instead of a sequence.
float truncated_normal(std::uint64_t seed, std::uint64_t key, std::size_t column, float stddev) {
  const std::uint64_t base = mix64(mix64(seed, key), column);
  for (std::uint64_t attempt = 0;; ++attempt) {
    const double x = standard_normal(mix64(base, attempt));
    if (std::abs(x) <= 2.0) return static_cast<float>(x * stddev);
  }
}

}  // namespace

// Finding a key's slot kAhead keys early is what lets its row be
// prefetched; the slot found then is kept for when the key's turn comes,
// so each key is looked up once. The prefetches are only hints: a push
// that grows the slots between a hint and its use makes it useless, never
// wrong (row_found checks what it is given).
class sparse_table::lookahead {
 public:
  lookahead(const sparse_table& table, const std::uint64_t* keys, std::size_t n)
      : table_(table), keys_(keys), n_(n) {
    for (std::size_t j = 0; j < std::min(n, kAhead); ++j) found_[j] = find(j);
  }

  // Key i's slot (keys are taken in order), and key i + kAhead's found.
  found_slot take(std::size_t i) {
    const found_slot f = found_[i % kAhead];
    if (i + kAhead < n_) found_[i % kAhead] = find(i + kAhead);
    return f;
  }

 private:
  found_slot find(std::size_t j) const {
    const auto& slots = table_.slots_;
    if (j + kAhead < n_) __builtin_prefetch(&slots[mix64(keys_[j + kAhead]) & (slots.size() - 1)]);
    const std::size_t at = table_.slot_of(keys_[j]);
    if (slots[at].key == keys_[j]) __builtin_prefetch(table_.row(slots[at].row));
    return {at, slots.size()};
  }

  const sparse_table& table_;
  const std::uint64_t* keys_;
  std::size_t n_;
  std::array<found_slot, kAhead> found_{};
};

const char* to_string(sparse_refusal why) {
  switch (why) {
    case sparse_refusal::key_out_of_range: return "key_out_of_range";
    case sparse_refusal::keys_not_ascending: return "keys_not_ascending";
    case sparse_refusal::duplicate_key: return "duplicate_key";
    case sparse_refusal::value_count: return "value_count";
    case sparse_refusal::not_finite: return "not_finite";
  }
  return "?";
}

sparse_table::sparse_table(const sparse_table_spec& spec)
    : spec_(spec),
      stride_(spec.dim + spec.slots()),
      chunk_bits_(chunk_bits_for(spec.rows)),
      slots_(kFirstSlots, slot{kEmpty, 0}) {
  if (spec.rows == 0 || spec.rows > kMaxRows || spec.first_key > kMaxRows - spec.rows)
    throw std::invalid_argument("sparse table: " + std::to_string(spec.rows) + " rows from key " +
                                std::to_string(spec.first_key) + " (expected 1 to 2^63 keys)");
  if (spec.dim == 0) throw std::invalid_argument("sparse table: rows of 0 floats");
}

std::size_t sparse_table::bytes_used() const {
  return slots_.size() * sizeof(slot) +
         chunks_.size() * (std::size_t{1} << chunk_bits_) * stride_ * sizeof(float);
}

std::optional<sparse_refusal> sparse_table::check_keys(
    const std::vector<std::uint64_t>& keys) const {
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (keys[i] < spec_.first_key || keys[i] >= spec_.end_key())
      return sparse_refusal::key_out_of_range;
    if (i > 0 && keys[i] == keys[i - 1]) return sparse_refusal::duplicate_key;
    if (i > 0 && keys[i] < keys[i - 1]) return sparse_refusal::keys_not_ascending;
  }
  return std::nullopt;
}

std::vector<float> sparse_table::pull(const std::vector<std::uint64_t>& keys) const {
  if (const auto why = check_keys(keys))
    throw std::invalid_argument(std::string("sparse table: pull of refused keys: ") +
                                to_string(*why));
  std::vector<float> values(keys.size() * spec_.dim);
  read(keys.data(), keys.size(), values.data());
  return values;
}

std::vector<row_ref> sparse_table::read(const std::uint64_t* keys, std::size_t n,
                                        float* into) const {
  std::vector<row_ref> refs(n);
  const std::size_t dim = spec_.dim;
  lookahead ahead(*this, keys, n);
  for (std::size_t i = 0; i < n; ++i) {
    const slot& s = slots_[ahead.take(i).at];
    float* out = into + i * dim;
    if (s.key == keys[i]) {
      refs[i] = s.row;
      const float* held = row(s.row);
      // A loop, not std::copy: that calls memmove, costly for rows of a few floats.
      for (std::size_t j = 0; j < dim; ++j) out[j] = held[j];
    } else {
      refs[i] = kNoRow;
      fill_initial(keys[i], out);
    }
  }
  return refs;
}

std::optional<sparse_refusal> sparse_table::push(const keyed_rows& gradient, update_moment at) {
  std::optional<sparse_refusal> why = check_keys(gradient.keys);
  if (!why && gradient.values.size() != gradient.keys.size() * spec_.dim)
    why = sparse_refusal::value_count;
  if (!why && !all_finite(gradient.values.data(), gradient.values.size()))
    why = sparse_refusal::not_finite;
  if (why) {
    ++refused_[static_cast<std::size_t>(*why)];
    return why;
  }
  apply(gradient.keys.data(), nullptr, gradient.keys.size(), gradient.values.data(), at);
  return std::nullopt;
}

void sparse_table::apply(const std::uint64_t* keys, const row_ref* refs, std::size_t n,
                         const float* gradient, update_moment at) {
  const std::size_t dim = spec_.dim;
  const row_update update(spec_.update, spec_.reg, at.learning_rate, at.step);
  if (refs != nullptr) {
    for (std::size_t i = 0; i < n; ++i) {
      float* values = row_for_update(keys, refs, n, i);
      update.apply(values, values + dim, gradient + i * dim, dim);
    }
    return;
  }
  lookahead ahead(*this, keys, n);
  for (std::size_t i = 0; i < n; ++i) {
    float* values = row_found(keys[i], ahead.take(i));
    update.apply(values, values + dim, gradient + i * dim, dim);
  }
}

// A remembered row is read from the arena directly, so only its row is
// worth prefetching; a key without one costs a lookup as a push's would.
float* sparse_table::row_for_update(const std::uint64_t* keys, const row_ref* refs,
                                    std::size_t n, std::size_t i) {
  if (refs[i] != kNoRow) {
    if (i + kAhead < n && refs[i + kAhead] != kNoRow) __builtin_prefetch(row(refs[i + kAhead]));
    return row(refs[i]);
  }
  return row_found(keys[i], found_slot{slot_of(keys[i]), slots_.size()});
}

// Rows created since f was found only filled empty slots: f still holds the
// key, or is still the empty slot it would take, unless the slots grew or
// another key took that slot.
float* sparse_table::row_found(std::uint64_t key, found_slot f) {
  std::size_t at = f.at;
  if (f.slots != slots_.size() || (slots_[at].key != key && slots_[at].key != kEmpty))
    at = slot_of(key);
  return slots_[at].key == key ? row(slots_[at].row) : create(key, at);
}

std::uint64_t sparse_table::refused(sparse_refusal why) const {
  return refused_[static_cast<std::size_t>(why)];
}

const float* sparse_table::find(std::uint64_t key) const {
  if (key < spec_.first_key || key >= spec_.end_key()) return nullptr;  // kEmpty among them
  const slot& s = slots_[slot_of(key)];
  return s.key == key ? row(s.row) : nullptr;
}

std::size_t sparse_table::slot_of(std::uint64_t key) const {
  const std::size_t mask = slots_.size() - 1;
  std::size_t at = mix64(key) & mask;
  while (slots_[at].key != key && slots_[at].key != kEmpty) at = (at + 1) & mask;
  return at;
}

float* sparse_table::row(std::size_t index) const {
  const std::size_t in_chunk = index & ((std::size_t{1} << chunk_bits_) - 1);
  return chunks_[index >> chunk_bits_].get() + in_chunk * stride_;
}

float* sparse_table::create(std::uint64_t key, std::size_t at) {
  if (rows_held_ == std::numeric_limits<std::uint32_t>::max())
    throw std::length_error("sparse table: more than 2^32 - 1 rows held");
  if (static_cast<double>(rows_held_ + 1) > kMaxLoad * static_cast<double>(slots_.size())) {
    grow_slots();
    at = slot_of(key);
  }
  const std::size_t index = rows_held_++;
  if ((index >> chunk_bits_) == chunks_.size())
    chunks_.push_back(std::make_unique<float[]>((std::size_t{1} << chunk_bits_) * stride_));
  slots_[at] = slot{key, static_cast<std::uint32_t>(index)};
  float* values = row(index);
  fill_initial(key, values);
  fill_initial_slots(spec_.update, values + spec_.dim, spec_.dim);
  return values;
}

void sparse_table::grow_slots() {
  decltype(slots_) old(2 * slots_.size(), slot{kEmpty, 0});
  old.swap(slots_);
  for (const slot& s : old) {
    if (s.key != kEmpty) slots_[slot_of(s.key)] = s;
  }
}

void sparse_table::fill_initial(std::uint64_t key, float* values) const {
  for (std::size_t j = 0; j < spec_.dim; ++j) {
    values[j] = spec_.init.kind == init_kind::truncated_normal
                    ? truncated_normal(spec_.init_seed, key, j, spec_.init.stddev)
                    : 0.0f;
  }
}

row_dump sparse_table::dump(std::uint64_t first, std::uint64_t last) const {
  std::vector<std::pair<std::uint64_t, std::uint32_t>> held;  // (key, row index)
  for (const slot& s : slots_) {
    if (s.key != kEmpty && s.key >= first && s.key < last) held.emplace_back(s.key, s.row);
  }
  std::sort(held.begin(), held.end());
  const std::size_t dim = spec_.dim;
  row_dump out;
  out.keys.reserve(held.size());
  out.values.reserve(held.size() * dim);
  out.accumulators.reserve(held.size() * spec_.slots());
  for (const auto& [key, index] : held) {
    const float* values = row(index);
    out.keys.push_back(key);
    out.values.insert(out.values.end(), values, values + dim);
    out.accumulators.insert(out.accumulators.end(), values + dim, values + stride_);
  }
  return out;
}

void sparse_table::check_dump(const row_dump& rows) const {
  const auto refuse = [](const std::string& why) {
    throw std::invalid_argument("sparse table: load of " + why);
  };
  for (std::size_t i = 0; i < rows.keys.size(); ++i) {
    if (rows.keys[i] < spec_.first_key || rows.keys[i] >= spec_.end_key())
      refuse("key " + std::to_string(rows.keys[i]) + " (the table has keys [" +
             std::to_string(spec_.first_key) + ", " + std::to_string(spec_.end_key()) + "))");
    if (i > 0 && rows.keys[i] <= rows.keys[i - 1])
      refuse("key " + std::to_string(rows.keys[i]) + " after key " +
             std::to_string(rows.keys[i - 1]) + " (keys must ascend)");
  }
  const std::size_t expected = rows.keys.size() * spec_.dim;
  if (rows.values.size() != expected)
    refuse(std::to_string(rows.values.size()) + " values for " + std::to_string(rows.keys.size()) +
           " rows of " + std::to_string(spec_.dim));
  const std::size_t slots = rows.keys.size() * spec_.slots();
  if (!rows.accumulators.empty() && rows.accumulators.size() != slots)
    refuse(std::to_string(rows.accumulators.size()) + " optimizer slots for " +
           std::to_string(rows.keys.size()) + " rows of " + std::to_string(spec_.slots()) + " (" +
           to_string(spec_.update.rule) + ")");
}

void sparse_table::load(const row_dump& rows) {
  check_dump(rows);
  // Slots sized for every row at once: no rehash while loading.
  std::size_t slots = kFirstSlots;
  while (static_cast<double>(rows.keys.size()) > kMaxLoad * static_cast<double>(slots)) slots *= 2;
  slots_.assign(slots, slot{kEmpty, 0});
  chunks_.clear();
  rows_held_ = 0;
  const std::size_t dim = spec_.dim;
  for (std::size_t i = 0; i < rows.keys.size(); ++i) {
    float* values = create(rows.keys[i], slot_of(rows.keys[i]));
    std::copy_n(rows.values.data() + i * dim, dim, values);
    if (!rows.accumulators.empty())
      std::copy_n(rows.accumulators.data() + i * spec_.slots(), spec_.slots(), values + dim);
  }
}

keyed_rows mean_per_row(const std::vector<keyed_rows>& gradients, std::size_t dim) {
  keyed_rows mean;
  for (const keyed_rows& g : gradients) mean.keys.insert(mean.keys.end(), g.keys.begin(), g.keys.end());
  std::sort(mean.keys.begin(), mean.keys.end());
  mean.keys.erase(std::unique(mean.keys.begin(), mean.keys.end()), mean.keys.end());
  mean.values.assign(mean.keys.size() * dim, 0.0f);
  std::vector<std::uint32_t> counts(mean.keys.size());
  for (const keyed_rows& g : gradients) {
    std::size_t at = 0;  // both key lists ascend: one forward walk
    for (std::size_t i = 0; i < g.keys.size(); ++i) {
      while (mean.keys[at] != g.keys[i]) ++at;
      ++counts[at];
      for (std::size_t j = 0; j < dim; ++j) mean.values[at * dim + j] += g.values[i * dim + j];
    }
  }
  for (std::size_t at = 0; at < mean.keys.size(); ++at) {
    for (std::size_t j = 0; j < dim; ++j) mean.values[at * dim + j] /= static_cast<float>(counts[at]);
  }
  return mean;
}

}  // namespace downpour
