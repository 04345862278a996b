#include "actors/shard_rows.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "model/update.hpp"

namespace downpour {
namespace {

keyed_rows as_keyed_rows(const push_msg& m) {
  return keyed_rows{m.keys.keys, std::vector<float>(m.rows.values.begin(), m.rows.values.end())};
}

std::string range_text(row_range r) {
  return "[" + std::to_string(r.first) + ", " + std::to_string(r.last) + ")";
}

}  // namespace

shard_rows::shard_rows(const row_tables_spec& spec, row_range owned, train_mode mode)
    : pulls_kept_(mode == train_mode::sync ? 1 : 2),
      pushes_spend_(mode != train_mode::sync),
      table_(spec),
      owned_(owned) {}

caf::error shard_rows::load(const row_part& part) {
  if (part.first != owned_.first || part.last != owned_.last)
    return caf::make_error(errc::shape_mismatch, "rows " + range_text({part.first, part.last}) +
                                                     " sent to the shard of rows " +
                                                     range_text(owned_));
  if (auto err = check_keys(part.keys, "an init"); err) return err;
  try {
    table_.load(row_dump{
        part.keys.keys, std::vector<float>(part.values.values.begin(), part.values.values.end()),
        std::vector<float>(part.accumulators.values.begin(), part.accumulators.values.end())});
  } catch (const std::invalid_argument& e) {
    return caf::make_error(errc::shape_mismatch, e.what());
  }
  pulled_.clear();
  round_.clear();
  return caf::none;
}

caf::error shard_rows::check_keys(const key_list& keys, const char* what) const {
  const auto& k = keys.keys;
  for (std::size_t i = 0; i < k.size(); ++i) {
    if (k[i] < owned_.first || k[i] >= owned_.last)
      return caf::make_error(errc::bad_keys,
                             std::string(what) + " names row " + std::to_string(k[i]) +
                                 ", outside this shard's rows " + range_text(owned_));
    if (i > 0 && k[i] <= k[i - 1])
      return caf::make_error(errc::bad_keys,
                             std::string(what) + " names row " + std::to_string(k[i]) +
                                 (k[i] == k[i - 1] ? " twice" : " after a higher one"));
  }
  return caf::none;
}

namespace {

// Sharers ascending, none the worker itself: each trainer is remembered once.
caf::error check_sharers(const row_pull& p) {
  for (std::size_t i = 0; i < p.sharers.size(); ++i)
    if (p.sharers[i] == p.worker || (i > 0 && p.sharers[i] <= p.sharers[i - 1]))
      return caf::make_error(errc::bad_keys, "a pull names worker " + std::to_string(p.sharers[i]) +
                                                 " twice, or its sharers out of order");
  return caf::none;
}

}  // namespace

caf::expected<tensor> shard_rows::pull(const row_pull& p) {
  if (auto err = check_keys(p.keys, "a pull")) return err;
  if (auto err = check_sharers(p)) return err;
  tensor values;
  values.values.resize(table_.spec().values_for(p.keys.keys));
  auto rows = table_.read(p.keys.keys, values.values.data());
  for (const auto sharer : p.sharers) remember(sharer, p.keys.keys, rows);
  remember(p.worker, p.keys.keys, std::move(rows));
  return values;
}

void shard_rows::remember(std::uint32_t worker, const std::vector<std::uint64_t>& keys,
                          std::vector<row_ref> rows) {
  auto& pulls = pulled_[worker];
  if (pulls.size() < pulls_kept_) return pulls.push_back(pull_record{keys, std::move(rows)});
  // Reuses the oldest key list's memory: no allocation of keys per pull.
  pulls.push_back(std::move(pulls.front()));
  pulls.pop_front();
  pulls.back().keys = keys;
  pulls.back().rows = std::move(rows);
}

namespace {

// The rows a pull found for keys, a subset of its own: both ascend, so one
// forward walk; nullopt if some key is not among the pull's. A worker's
// own push names every key it pulled, which the first test settles.
std::optional<std::vector<row_ref>> refs_within(const std::vector<std::uint64_t>& pulled,
                                               const std::vector<row_ref>& rows,
                                               const std::vector<std::uint64_t>& keys) {
  if (keys == pulled) return rows;
  std::vector<row_ref> refs;
  refs.reserve(keys.size());
  std::size_t at = 0;
  for (const std::uint64_t key : keys) {
    while (at < pulled.size() && pulled[at] < key) ++at;
    if (at == pulled.size() || pulled[at] != key) return std::nullopt;
    refs.push_back(rows[at]);
  }
  return refs;
}

}  // namespace

// A push is for the oldest pull that holds its keys: pushes come in the
// order of their pulls, and a pull is pushed for at most once, so the rows
// of a pull already pushed for (the ids of a previous batch) are refused.
// A worker's own pushes always name rows it pulled: one that does not is
// forged, and its pulls are spent with it (the worker pulls again).
std::optional<std::vector<row_ref>> shard_rows::spend_pull(const push_msg& m) {
  auto it = pulled_.find(m.worker);
  if (it == pulled_.end()) return std::nullopt;
  auto& pulls = it->second;
  for (auto p = pulls.begin(); p != pulls.end(); ++p) {
    auto refs = refs_within(p->keys, p->rows, m.keys.keys);
    if (!refs) continue;
    if (pushes_spend_) pulls.erase(pulls.begin(), p + 1);
    return refs;
  }
  if (pushes_spend_) pulls.clear();
  return std::nullopt;
}

caf::expected<std::vector<row_ref>> shard_rows::claim(const push_msg& m) {
  const auto from = " from worker " + std::to_string(m.worker);
  if (auto err = check_keys(m.keys, "a push")) return err;
  const std::size_t values = table_.spec().values_for(m.keys.keys);
  if (m.rows.values.size() != values)
    return caf::make_error(errc::shape_mismatch, "push of " + std::to_string(m.rows.values.size()) +
                                                     " row values for " +
                                                     std::to_string(m.keys.size()) + " rows of " +
                                                     std::to_string(values) + " values" + from);
  if (!all_finite(m.rows.values.data(), m.rows.values.size()))
    return caf::make_error(errc::not_finite, "row gradient" + from + " has NaN or inf");
  auto refs = spend_pull(m);
  if (!refs)
    return caf::make_error(errc::unpulled_rows,
                           "push of rows worker " + std::to_string(m.worker) + " did not pull");
  return std::move(*refs);
}

caf::expected<std::vector<row_ref>> shard_rows::claim_resent(const push_msg& m) {
  auto refs = claim(m);
  if (refs || refs.error() != errc::unpulled_rows) return refs;
  row_pull again;
  again.worker = m.worker;
  again.keys = m.keys;
  if (auto pulled = pull(again); !pulled) return std::move(pulled.error());
  return claim(m);
}

void shard_rows::apply(const push_msg& m, const std::vector<row_ref>& claimed, update_moment at) {
  table_.apply(m.keys.keys, claimed, m.rows.values.data(), at);
}

void shard_rows::add_to_round(push_msg& m) {
  round_.push_back(as_keyed_rows(m));
}

void shard_rows::apply_round(update_moment at) {
  if (!round_.empty()) table_.push(table_.mean_per_row(round_), at);
  round_.clear();
}

row_part shard_rows::snapshot() const {
  auto dump = table_.dump(owned_.first, owned_.last);
  row_part part;
  part.first = owned_.first;
  part.last = owned_.last;
  part.keys = key_list{std::move(dump.keys)};
  part.values = tensor{dump.values};
  part.accumulators = tensor{dump.accumulators};
  return part;
}

}  // namespace downpour
