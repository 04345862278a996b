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

caf::expected<tensor> shard_rows::pull(std::uint32_t worker, const key_list& keys) {
  if (auto err = check_keys(keys, "a pull")) return err;
  auto& pulls = pulled_[worker];
  if (pulls.size() == pulls_kept_) {
    // Reuses the oldest key list's memory: no allocation per pull.
    pulls.push_back(std::move(pulls.front()));
    pulls.pop_front();
    pulls.back() = keys.keys;
  } else {
    pulls.push_back(keys.keys);
  }
  return tensor{table_.pull(keys.keys)};
}

// A push is for the oldest pull that holds its keys: pushes come in the
// order of their pulls, and a pull is pushed for at most once, so the rows
// of a pull already pushed for (the ids of a previous batch) are refused.
// A worker's own pushes always name rows it pulled: one that does not is
// forged, and its pulls are spent with it (the worker pulls again).
bool shard_rows::spend_pull(const push_msg& m) {
  auto it = pulled_.find(m.worker);
  if (it == pulled_.end()) return false;
  auto& pulls = it->second;
  const auto& keys = m.keys.keys;
  for (auto p = pulls.begin(); p != pulls.end(); ++p) {
    if (!std::includes(p->begin(), p->end(), keys.begin(), keys.end())) continue;
    if (pushes_spend_) pulls.erase(pulls.begin(), p + 1);
    return true;
  }
  if (pushes_spend_) pulls.clear();
  return false;
}

caf::error shard_rows::claim(const push_msg& m) {
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
  if (!spend_pull(m))
    return caf::make_error(errc::unpulled_rows,
                           "push of rows worker " + std::to_string(m.worker) + " did not pull");
  return caf::none;
}

void shard_rows::apply(const push_msg& m, update_moment at) {
  table_.push(as_keyed_rows(m), at);
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
