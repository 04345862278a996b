// The radix sort every sparse batch's keys go through: against std::sort on
// keys of every width up to 64 bits, with repeats, and the positions it
// reports for each input key.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "model/key_sort.hpp"

namespace downpour::test_key_sort {
namespace {

// n keys below 2^bits (any 64-bit value for 64), drawn from a pool of
// distinct values a quarter of n, so that many repeat.
std::vector<std::uint64_t> keys_of_width(std::size_t n, unsigned bits, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::uint64_t mask = bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
  std::vector<std::uint64_t> pool(std::max<std::size_t>(n / 4, 1));
  for (auto& k : pool) k = rng() & mask;
  std::vector<std::uint64_t> keys(n);
  for (auto& k : keys) k = pool[rng() % pool.size()];
  return keys;
}

void check_sorts(key_sorter& sorter, const std::vector<std::uint64_t>& input) {
  std::vector<std::uint64_t> expected = input;
  std::sort(expected.begin(), expected.end());
  const key_sorter::sorted s = sorter.sort(input);
  CHECK(s.keys == expected);
  REQUIRE(s.position.size() == input.size());
  std::vector<bool> taken(input.size());
  for (std::size_t i = 0; i < input.size(); ++i) {
    REQUIRE(s.position[i] < input.size());
    CHECK(s.keys[s.position[i]] == input[i]);
    CHECK(!taken[s.position[i]]);
    taken[s.position[i]] = true;
  }
}

}  // namespace

TEST_CASE("keys of every width from 1 to 64 bits sort as std::sort sorts them") {
  key_sorter sorter;  // one sorter throughout: its buffers carry nothing over
  for (unsigned bits : {1u, 7u, 8u, 9u, 20u, 33u, 56u, 63u, 64u}) {
    for (std::size_t n : {0u, 1u, 2u, 255u, 1800u, 40000u}) {
      CAPTURE(bits);
      CAPTURE(n);
      check_sorts(sorter, keys_of_width(n, bits, bits * 1000 + n));
    }
  }
}

TEST_CASE("each input key's position names a place holding it, and repeats keep their order") {
  key_sorter sorter;
  const std::vector<std::uint64_t> input{5, 3, 5, 0, ~std::uint64_t{0}, 3, 5};
  const key_sorter::sorted s = sorter.sort(input);
  CHECK(s.keys == std::vector<std::uint64_t>{0, 3, 3, 5, 5, 5, ~std::uint64_t{0}});
  CHECK(s.position == std::vector<std::uint32_t>{3, 1, 4, 0, 6, 2, 5});
}

TEST_CASE("all-zero keys take no pass and come back as they are") {
  key_sorter sorter;
  const key_sorter::sorted s = sorter.sort(std::vector<std::uint64_t>(10, 0));
  CHECK(s.keys == std::vector<std::uint64_t>(10, 0));
  for (std::uint32_t i = 0; i < 10; ++i) CHECK(s.position[i] == i);
}

}  // namespace downpour::test_key_sort
