#include <doctest/doctest.h>

#include <numeric>

#include "protocol/placement.hpp"
#include "model/mlp_spec.hpp"

namespace test_placement {

using namespace downpour;

TEST_CASE("balanced placement splits the buffer into contiguous near-equal ranges") {
  const model_layout s = mlp_spec{}.layout("mlp");
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
  const model_layout s = mlp_spec{}.layout("mlp");
  auto layouts = partition(s, 2, placement_kind::round_robin);
  REQUIRE(layouts[0].ranges.size() == 2);  // layer1/weights, layer2/weights
  CHECK(layouts[0].size() == 392000 + 5000);
  CHECK(layouts[1].size() == 500 + 10);
  auto five = partition(s, 5, placement_kind::round_robin);
  CHECK(five[4].size() == 0);  // more shards than variables: one holds nothing
  // Any model's variables: three layers' six on four shards.
  auto deeper = partition(mlp_spec{784, {500, 300}, 10}.layout("mlp"), 4,
                          placement_kind::round_robin);
  CHECK(deeper[0].size() == 392000 + 300 * 10);  // layer1/weights, layer3/weights
  CHECK(deeper[1].size() == 500 + 10);           // layer1/biases, layer3/biases
  CHECK(deeper[2].size() == 500 * 300);
  CHECK(deeper[3].size() == 300);
}

TEST_CASE("gather then scatter restores every float of the buffer") {
  const model_layout s = mlp_spec{5, {4, 3}, 3}.layout("mlp");
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

}  // namespace test_placement
