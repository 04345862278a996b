// The batcher: TF's epoch boundary and shuffle, the same seed replaying the
// same batches, scaling, no allocation per step.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "data/batcher.hpp"
#include "data/idx.hpp"

namespace downpour::test_data_batcher {
namespace {

// A set of count 1x1 images whose pixel and label both equal the example index.
std::shared_ptr<const dataset> indexed_set(std::size_t count) {
  std::vector<std::uint8_t> bytes;
  for (std::size_t i = 0; i < count; ++i) bytes.push_back(static_cast<std::uint8_t>(i));
  return std::make_shared<idx_images>(1, 1, bytes, bytes);
}

std::vector<std::int32_t> draw_labels(batcher& b, std::size_t batches) {
  std::vector<std::int32_t> seen;
  for (std::size_t k = 0; k < batches; ++k) {
    const batch& out = b.next_batch();
    seen.insert(seen.end(), out.y.begin(), out.y.end());
  }
  return seen;
}

}  // namespace

TEST_CASE("a batch that crosses the epoch end takes the old rest and the new permutation's start") {
  const auto data = indexed_set(10);
  batcher b(data, 4, 42);
  const std::vector<std::int32_t> first_two = draw_labels(b, 2);
  CHECK(b.epochs_completed() == 0);
  const batch& third = b.next_batch();
  CHECK(b.epochs_completed() == 1);
  std::vector<std::int32_t> epoch0 = first_two;
  epoch0.insert(epoch0.end(), third.y.begin(), third.y.begin() + 2);
  std::vector<std::int32_t> sorted0 = epoch0;
  std::sort(sorted0.begin(), sorted0.end());
  std::vector<std::int32_t> all(10);
  std::iota(all.begin(), all.end(), 0);
  CHECK(sorted0 == all);
  CHECK(std::set<std::int32_t>{third.y[2], third.y[3]}.size() == 2);

  // Across many epochs the stream of examples is a concatenation of permutations.
  batcher long_run(data, 4, 7);
  const std::vector<std::int32_t> stream = draw_labels(long_run, 50);  // 200 = 20 epochs
  std::vector<std::vector<std::int32_t>> epochs;
  for (std::size_t e = 0; e < 20; ++e) {
    std::vector<std::int32_t> one(stream.begin() + 10 * e, stream.begin() + 10 * (e + 1));
    epochs.push_back(one);
    std::sort(one.begin(), one.end());
    CHECK(one == all);
  }
  CHECK(long_run.epochs_completed() == 19);  // the 20th epoch's end is not yet crossed
  CHECK(epochs[0] != epochs[1]);             // reshuffled at the boundary
}

TEST_CASE("epochs_completed counts epoch ends crossed, as in TF") {
  for (std::size_t count : {8, 10, 13}) {
    const auto data = indexed_set(count);
    batcher b(data, 4, 1);
    for (std::size_t k = 1; k <= 40; ++k) {
      b.next_batch();
      CHECK(b.epochs_completed() == (4 * k - 1) / count);
    }
  }
  const auto data = indexed_set(5);
  batcher whole(data, 5, 3);
  for (std::size_t k = 1; k <= 4; ++k) {
    std::vector<std::int32_t> y = whole.next_batch().y;
    CHECK(whole.epochs_completed() == k - 1);
    std::sort(y.begin(), y.end());
    CHECK(y == std::vector<std::int32_t>{0, 1, 2, 3, 4});
  }
}

TEST_CASE("the same seed replays the same batches and a different seed does not") {
  const auto data = indexed_set(100);
  batcher a(data, 16, 2024);
  batcher b(data, 16, 2024);
  batcher c(data, 16, 2025);
  const auto seq_a = draw_labels(a, 40);
  CHECK(seq_a == draw_labels(b, 40));
  CHECK(seq_a != draw_labels(c, 40));
}

TEST_CASE("the shuffle puts every example first about equally often") {
  const auto data = indexed_set(10);
  batcher b(data, 10, 99);
  std::array<int, 10> first{};
  for (int epoch = 0; epoch < 20000; ++epoch) ++first.at(b.next_batch().y[0]);
  for (int n : first) {
    CHECK(n > 1700);  // expectation 2000, standard deviation about 42
    CHECK(n < 2300);
  }
}

TEST_CASE("pixels are scaled to [0,1] exactly as TF does and labels become int32") {
  auto data = std::make_shared<idx_images>(
      2, 2, std::vector<std::uint8_t>{0, 255, 128, 1, 0, 255, 128, 1},
      std::vector<std::uint8_t>{3, 3});
  batcher b(data, 2, 5);
  const batch& out = b.next_batch();
  CHECK(out.size == 2);
  CHECK(out.input_size == 4);
  REQUIRE(out.x.size() == 8);
  CHECK(out.x[0] == 0.0f);
  CHECK(out.x[1] == 1.0f);
  CHECK(out.x[2] == static_cast<float>(128) * (1.0f / 255.0f));
  CHECK(out.x[3] == 1.0f / 255.0f);
  CHECK(out.y == std::vector<std::int32_t>{3, 3});
}

TEST_CASE("batches reuse one buffer and never allocate per step") {
  const auto data = indexed_set(10);
  batcher b(data, 3, 11);
  const batch& first = b.next_batch();
  const float* x = first.x.data();
  const std::int32_t* y = first.y.data();
  for (int k = 0; k < 20; ++k) {
    const batch& next = b.next_batch();
    CHECK(&next == &first);
    CHECK(next.x.data() == x);
    CHECK(next.y.data() == y);
  }
}

TEST_CASE("a batch larger than the set or of size zero is refused at construction") {
  const auto data = indexed_set(10);
  CHECK_THROWS_WITH_AS(batcher(data, 11, 1),
                       "data: batch size 11 exceeds the 10 examples in the set", data_error);
  CHECK_THROWS_AS(batcher(data, 0, 1), data_error);
  CHECK_NOTHROW(batcher(data, 10, 1));
}

TEST_CASE("batches of the real training set hold valid labels and scaled pixels") {
  const auto data = load_mnist(DOWNPOUR_DEFAULT_DATA_DIR, 5000);
  batcher b(data.train, 100, 123);
  for (int k = 0; k < 600; ++k) {  // crosses the 550-batch epoch end
    const batch& out = b.next_batch();
    REQUIRE(out.x.size() == 100 * 784);
    CHECK(std::all_of(out.y.begin(), out.y.end(), [](std::int32_t l) { return l >= 0 && l < 10; }));
    CHECK(std::all_of(out.x.begin(), out.x.end(), [](float v) { return v >= 0.0f && v <= 1.0f; }));
  }
  CHECK(b.epochs_completed() == 1);
}

}  // namespace downpour::test_data_batcher
