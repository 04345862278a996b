// The trainers' pulls merged into one per shard (protocol/pull_merge): the
// union of their keys, and each trainer's rows cut back out of the reply,
// checked against a lookup of every key by hand.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <stdexcept>
#include <vector>

#include "protocol/pull_merge.hpp"

namespace test_pull_merge {

using namespace downpour;

namespace {

// Keys 0-9 one float wide, keys 10-19 two.
row_space two_widths() {
  row_variable_info a;
  a.name = "a";
  a.rows = 10;
  a.cols = 1;
  row_variable_info b;
  b.name = "b";
  b.rows = 10;
  b.cols = 2;
  return row_space({a, b});
}

// A key's row as the shard would hold it: its floats are key + column / 10.
floats row_values(const row_space& space, const std::vector<std::uint64_t>& keys) {
  floats out;
  for (const auto key : keys)
    for (std::size_t c = 0; c < space.width_of(key); ++c)
      out.push_back(static_cast<float>(key) + static_cast<float>(c) / 10.0f);
  return out;
}

// The union as a sort of every key finds it: what the merge must equal.
std::vector<std::uint64_t> sorted_union(const std::vector<std::vector<std::uint64_t>>& lists) {
  std::vector<std::uint64_t> all;
  for (const auto& l : lists) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

// lists[t][i]'s place in the union, by search.
std::vector<std::vector<std::size_t>> places(const std::vector<std::vector<std::uint64_t>>& lists,
                                             const std::vector<std::uint64_t>& keys) {
  std::vector<std::vector<std::size_t>> out;
  for (const auto& l : lists) {
    out.emplace_back();
    for (const auto k : l)
      out.back().push_back(
          static_cast<std::size_t>(std::lower_bound(keys.begin(), keys.end(), k) - keys.begin()));
  }
  return out;
}

merged_keys merge_all(const std::vector<std::vector<std::uint64_t>>& lists) {
  std::vector<const std::vector<std::uint64_t>*> p;
  for (const auto& l : lists) p.push_back(&l);
  return merge_keys(p);
}

}  // namespace

TEST_CASE("the merged keys equal the sorted union of all lists, with keys shared across "
          "trainers, empty lists and a single list") {
  std::mt19937 rng(11);
  for (int round = 0; round < 200; ++round) {
    std::vector<std::vector<std::uint64_t>> lists(1 + rng() % 4);
    for (auto& l : lists) {
      const unsigned density = rng() % 4;  // 0: an empty list
      for (std::uint64_t key = 0; key < 60; ++key)
        if (density > 0 && rng() % 4 < density) l.push_back(key);
    }
    const auto m = merge_all(lists);
    const auto expected = sorted_union(lists);
    CHECK(m.keys == expected);
    CHECK(m.at == places(lists, expected));
  }
  CHECK(merge_all({}).keys.empty());
  CHECK(merge_all({{}, {}}).keys.empty());
  const auto one = merge_all({{2, 5, 8}});
  CHECK(one.keys == std::vector<std::uint64_t>{2, 5, 8});
  CHECK(one.at == std::vector<std::vector<std::size_t>>{{0, 1, 2}});
  const auto same = merge_all({{3, 4}, {3, 4}});
  CHECK(same.keys == std::vector<std::uint64_t>{3, 4});
  CHECK(same.at == std::vector<std::vector<std::size_t>>{{0, 1}, {0, 1}});
}

TEST_CASE("merged keys are the ascending union and each list finds its keys in it") {
  const std::vector<std::uint64_t> a{1, 4, 7};
  const std::vector<std::uint64_t> b{0, 4, 9, 12};
  const std::vector<std::uint64_t> none;
  const auto m = merge_keys({&a, &b, &none});
  CHECK(m.keys == std::vector<std::uint64_t>{0, 1, 4, 7, 9, 12});
  REQUIRE(m.at.size() == 3);
  CHECK(m.at[0] == std::vector<std::size_t>{1, 2, 3});
  CHECK(m.at[1] == std::vector<std::size_t>{0, 2, 4, 5});
  CHECK(m.at[2].empty());
}

TEST_CASE("each trainer's rows cut from the union's reply equal the rows of its own keys") {
  const auto space = two_widths();
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    std::vector<std::vector<std::uint64_t>> lists(3);
    for (auto& l : lists) {
      for (std::uint64_t key = 0; key < 20; ++key)
        if (rng() % 3 == 0) l.push_back(key);
    }
    const auto m = merge_keys({&lists[0], &lists[1], &lists[2]});
    const auto parts = split_rows(m, row_values(space, m.keys), space);
    REQUIRE(parts.size() == 3);
    for (std::size_t t = 0; t < 3; ++t) CHECK(parts[t] == row_values(space, lists[t]));
  }
}

TEST_CASE("a reply of another size than the union's rows is refused, naming both sizes") {
  const auto space = two_widths();
  const std::vector<std::uint64_t> a{3, 11};
  const auto m = merge_keys({&a});
  CHECK_THROWS_WITH_AS(split_rows(m, floats(2), space),
                       "a merged pull's reply holds 2 row values for 3", std::invalid_argument);
}

}  // namespace test_pull_merge
