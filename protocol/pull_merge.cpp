#include "protocol/pull_merge.hpp"

#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <string>

namespace downpour {

merged_keys merge_keys(const std::vector<const std::vector<std::uint64_t>*>& lists) {
  merged_keys out;
  std::size_t total = 0;
  for (const auto* l : lists) total += l->size();
  // Each list ascends without repeats, so the union is merged list by list
  // in linear time (a sort of all keys cost three times as much per key).
  out.keys.reserve(total);
  std::vector<std::uint64_t> merged;
  merged.reserve(total);
  for (const auto* l : lists) {
    merged.clear();
    std::set_union(out.keys.begin(), out.keys.end(), l->begin(), l->end(),
                   std::back_inserter(merged));
    out.keys.swap(merged);
  }
  out.at.reserve(lists.size());
  // Both ascend: one forward walk of the union per list.
  for (const auto* l : lists) {
    std::vector<std::size_t> at;
    at.reserve(l->size());
    std::size_t u = 0;
    for (const std::uint64_t key : *l) {
      while (out.keys[u] < key) ++u;
      at.push_back(u);
    }
    out.at.push_back(std::move(at));
  }
  return out;
}

namespace {

// Where each union key's values begin, and their end.
std::vector<std::size_t> value_offsets(const std::vector<std::uint64_t>& keys,
                                       const row_space& space) {
  std::vector<std::size_t> begin(keys.size() + 1, 0);
  for (std::size_t i = 0; i < keys.size(); ++i) begin[i + 1] = begin[i] + space.width_of(keys[i]);
  return begin;
}

}  // namespace

std::vector<floats> split_rows(const merged_keys& merged, const floats& values,
                               const row_space& space) {
  const auto begin = value_offsets(merged.keys, space);
  if (values.size() != begin.back())
    throw std::invalid_argument("a merged pull's reply holds " + std::to_string(values.size()) +
                                " row values for " + std::to_string(begin.back()));
  std::vector<floats> out;
  out.reserve(merged.at.size());
  for (const auto& at : merged.at) {
    std::size_t n = 0;
    for (const auto u : at) n += begin[u + 1] - begin[u];
    floats rows(n);
    auto* to = rows.data();
    for (const auto u : at)
      to = std::copy(values.begin() + static_cast<std::ptrdiff_t>(begin[u]),
                     values.begin() + static_cast<std::ptrdiff_t>(begin[u + 1]), to);
    out.push_back(std::move(rows));
  }
  return out;
}

}  // namespace downpour
