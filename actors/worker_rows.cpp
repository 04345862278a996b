// The sparse side of a worker: a batch names the rows it touches, each
// shard is asked for its range of them and gets back their gradient. The
// shards own contiguous row ranges in shard order, so each one's keys are
// a contiguous run of the batch's sorted keys (ps-lite's range slicer), and
// its values a contiguous run of the batch's values (each key as wide as
// its variable).
#include <algorithm>
#include <stdexcept>

#include "actors/worker_state.hpp"

namespace downpour {
namespace {

// Where the values of each cut's first key begin: keys ascending, in space.
std::vector<std::size_t> value_cuts_of(const row_space& space,
                                       const std::vector<std::uint64_t>& keys,
                                       const std::vector<std::size_t>& key_cuts) {
  const auto& vars = space.variables();
  std::vector<std::size_t> at(key_cuts.size(), 0);
  std::size_t total = 0;
  std::size_t v = 0;
  std::size_t i = 0;
  for (std::size_t k = 0; k < key_cuts.size(); ++k) {
    for (; i < key_cuts[k]; ++i) {
      while (v < vars.size() && keys[i] >= vars[v].end_key()) ++v;
      if (v == vars.size())
        throw std::out_of_range("the batch touches key " + std::to_string(keys[i]) +
                                ", outside the model's " + std::to_string(space.keys()) + " keys");
      total += vars[v].cols;
    }
    at[k] = total;
  }
  return at;
}

}  // namespace

void keep_batch(const worker_state& st, row_batch& slot, const batch& b,
                const read_position& after) {
  if (prefetches_rows(st)) {
    slot.copy = b;  // member by member: the vectors reuse their buffers once grown
    slot.data = &slot.copy;
  } else {
    slot.data = &b;
  }
  slot.position = after;
}

void cut_rows(worker_state& st) {
  auto& b = being_pulled(st);
  b.keys = b.workspace->touched_rows(*b.data);
  const auto& bounds = st.cfg.row_bounds;
  b.key_cuts.assign(bounds.size(), 0);
  for (std::size_t k = 0; k < bounds.size(); ++k)
    b.key_cuts[k] = static_cast<std::size_t>(
        std::lower_bound(b.keys.begin(), b.keys.end(), bounds[k]) - b.keys.begin());
  b.key_cuts.back() = b.keys.size();
  b.value_cuts = value_cuts_of(st.cfg.row_keys, b.keys, b.key_cuts);
  b.rows.resize(b.value_cuts.back());
  b.row_grad.resize(b.rows.size());
}

row_pull row_pull_for(const worker_state& st, std::size_t k, std::int64_t min_step) {
  const auto& b = being_pulled(st);
  const auto first = b.keys.begin() + static_cast<std::ptrdiff_t>(b.key_cuts[k]);
  const auto last = b.keys.begin() + static_cast<std::ptrdiff_t>(b.key_cuts[k + 1]);
  return row_pull{min_step, st.cfg.index, key_list{std::vector<std::uint64_t>(first, last)}};
}

caf::error take_rows(worker_state& st, std::size_t k, pull_reply& r) {
  auto& b = being_pulled(st);
  const std::size_t n = b.value_cuts[k + 1] - b.value_cuts[k];
  if (r.rows.values.size() != n)
    return caf::make_error(errc::shape_mismatch, "shard " + std::to_string(k) + " replied with " +
                                                     std::to_string(r.rows.values.size()) +
                                                     " row values for " + std::to_string(n));
  // The only shard's reply is the batch's rows as they are: no copy.
  if (n == b.rows.size())
    b.rows.swap(r.rows.values);
  else
    std::copy(r.rows.values.begin(), r.rows.values.end(),
              b.rows.begin() + static_cast<std::ptrdiff_t>(b.value_cuts[k]));
  return caf::none;
}

void add_outgoing_rows(const worker_state& st, std::size_t k, push_msg& m) {
  const auto& b = in_hand(st);
  const auto a = static_cast<std::ptrdiff_t>(b.key_cuts[k]);
  const auto e = static_cast<std::ptrdiff_t>(b.key_cuts[k + 1]);
  m.keys = key_list{std::vector<std::uint64_t>(b.keys.begin() + a, b.keys.begin() + e)};
  m.rows = tensor{floats(b.row_grad.begin() + static_cast<std::ptrdiff_t>(b.value_cuts[k]),
                         b.row_grad.begin() + static_cast<std::ptrdiff_t>(b.value_cuts[k + 1])),
                  st.cfg.wire};
}

}  // namespace downpour
