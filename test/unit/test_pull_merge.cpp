// The trainers' pulls merged into one per shard (protocol/pull_merge): the
// union of their keys, and each trainer's rows cut back out of the reply,
// checked against a lookup of every key by hand.
#include <doctest/doctest.h>

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

}  // namespace

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
