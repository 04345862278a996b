#include <doctest/doctest.h>

#include <numeric>

#include "actors/placement.hpp"

using namespace downpour;

TEST_CASE("balanced placement splits the buffer into contiguous near-equal ranges") {
  model_shape s;
  for (std::size_t shards = 1; shards <= 7; ++shards) {
    auto layouts = partition(s, shards, placement_kind::balanced);
    REQUIRE(layouts.size() == shards);
    std::size_t next = 0, smallest = s.size(), largest = 0;
    for (const auto& l : layouts) {
      REQUIRE(l.ranges.size() == 1);
      CHECK(l.ranges[0].offset == next);
      next += l.ranges[0].size;
      smallest = std::min(smallest, l.size());
      largest = std::max(largest, l.size());
    }
    CHECK(next == s.size());
    CHECK(largest - smallest <= 1);
  }
}

TEST_CASE("round-robin placement puts whole variables on shards in creation order") {
  model_shape s;
  auto layouts = partition(s, 2, placement_kind::round_robin);
  REQUIRE(layouts[0].ranges.size() == 2);  // layer1/weights, layer2/weights
  CHECK(layouts[0].size() == 392000 + 5000);
  CHECK(layouts[1].size() == 500 + 10);
  auto three = partition(s, 5, placement_kind::round_robin);
  CHECK(three[4].size() == 0);  // more shards than variables: one holds nothing
}

TEST_CASE("gather then scatter restores every float of the buffer") {
  model_shape s{5, 4, 3};
  std::vector<float> full(s.size());
  std::iota(full.begin(), full.end(), 1.0f);
  for (auto placement : {placement_kind::balanced, placement_kind::round_robin}) {
    std::vector<float> back(s.size(), 0.0f);
    for (const auto& l : partition(s, 3, placement)) {
      auto part = gather(l, full.data());
      CHECK(part.size() == l.size());
      scatter(l, part.data(), back.data());
    }
    CHECK(back == full);
  }
}
