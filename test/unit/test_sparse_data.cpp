// Sparse data sets: libsvm examples as a dataset, ranges and splits of them,
// and the batcher's compressed sparse rows (the same shuffle as dense sets,
// no allocation once grown).
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "data/batcher.hpp"
#include "data/idx.hpp"
#include "data/libsvm.hpp"
#include "data/streamed_input.hpp"
#include "model/builtin.hpp"
#include "parse_options.hpp"
#include "runtime/node/job.hpp"
#include "subprocess.hpp"

namespace downpour::test_sparse_data {
namespace {

// Example i has label i % 2 and i % 4 features: keys 10 i + j, values i + j / 10.
sparse_examples counted_examples(std::size_t count) {
  sparse_examples e;
  for (std::size_t i = 0; i < count; ++i) {
    for (std::size_t j = 0; j < i % 4; ++j) {
      e.keys.push_back(10 * i + j);
      e.values.push_back(static_cast<float>(i) + static_cast<float>(j) / 10.0f);
    }
    e.close_example(static_cast<std::uint8_t>(i % 2));
  }
  return e;
}

std::shared_ptr<const dataset> counted_set(std::size_t count) {
  return std::make_shared<libsvm_set>(counted_examples(count));
}

// The keys of example `example` as the set holds them.
std::vector<std::uint64_t> keys_of(const dataset& set, std::size_t example) {
  const dataset::sparse_row row = set.sparse_features(example);
  return {row.keys, row.keys + row.count};
}

}  // namespace

TEST_CASE("libsvm examples are a sparse data set of no fixed features and 0/1 labels") {
  const auto set = counted_set(6);
  CHECK(set->sparse());
  CHECK(set->size() == 6);
  CHECK(set->features() == 0);
  CHECK(set->label(3) == 1);
  CHECK(set->label(4) == 0);
  const dataset::sparse_row row = set->sparse_features(3);
  REQUIRE(row.count == 3);
  CHECK(row.keys[2] == 32);
  CHECK(row.values[2] == 3.2f);
  CHECK(set->sparse_features(4).count == 0);
  CHECK_FALSE(idx_images(1, 1, {1}, {0}).sparse());
}

TEST_CASE("a range of a sparse set is sparse and reads the base's examples") {
  const auto range = dataset_range(counted_set(10), 5, 4);
  CHECK(range->sparse());
  CHECK(range->size() == 4);
  CHECK(keys_of(*range, 2) == std::vector<std::uint64_t>{70, 71, 72});
  CHECK(range->label(0) == 1);
}

TEST_CASE("split_data holds out the first examples of a sparse set and counts two classes") {
  const data_splits s = split_data({"train.libsvm", counted_set(10)},
                                   {"test.libsvm", counted_set(3)}, data_shape{{0}}, 2);
  CHECK(s.classes == 2);
  CHECK(s.validation->size() == 2);
  CHECK(s.train->size() == 8);
  CHECK(s.train->sparse());
  CHECK(keys_of(*s.train, 0) == std::vector<std::uint64_t>{20, 21});
  CHECK(s.summary().shape.features() == 0);
  // All labels 0 is still a binary problem.
  sparse_examples zeros;
  zeros.keys.push_back(1);
  zeros.values.push_back(1.0f);
  zeros.close_example(0);
  const auto only_zero = std::make_shared<libsvm_set>(zeros);
  CHECK(split_data({"a", only_zero}, {"b", only_zero}, data_shape{{0}}, 0).classes == 2);
  // A dense test set against a sparse training set is refused, by name.
  const auto dense = std::make_shared<idx_images>(1, 1, std::vector<std::uint8_t>{1},
                                                  std::vector<std::uint8_t>{0});
  CHECK_THROWS_WITH_AS(
      split_data({"train.libsvm", counted_set(10)}, {"test.idx", dense}, data_shape{{0}}, 0),
      "data: test.idx: examples are dense but those in train.libsvm are sparse", data_error);
}

TEST_CASE("a sparse batch holds its examples' features as compressed sparse rows") {
  const auto set = counted_set(10);
  batcher b(set, 4, 42);
  for (int step = 0; step < 12; ++step) {  // crosses epoch ends
    const batch& out = b.next_batch();
    CHECK(out.x.empty());
    CHECK(out.input_size == 0);
    REQUIRE(out.offsets.size() == 5);
    CHECK(out.offsets[0] == 0);
    CHECK(out.offsets[4] == out.keys.size());
    CHECK(out.values.size() == out.keys.size());
    for (std::size_t r = 0; r < 4; ++r) {
      const std::size_t example = out.examples[r];
      CHECK(out.y[r] == set->label(example));
      const std::vector<std::uint64_t> keys(out.keys.begin() + out.offsets[r],
                                            out.keys.begin() + out.offsets[r + 1]);
      CHECK(keys == keys_of(*set, example));
      if (!keys.empty()) CHECK(out.values[out.offsets[r]] == static_cast<float>(example));
    }
  }
}

TEST_CASE("a sparse set is shuffled as a dense set of as many examples, seed for seed") {
  const auto sparse = counted_set(10);
  std::vector<std::uint8_t> bytes(10);
  for (std::size_t i = 0; i < 10; ++i) bytes[i] = static_cast<std::uint8_t>(i);
  const auto dense = std::make_shared<idx_images>(1, 1, bytes, bytes);
  batcher a(sparse, 3, 7);
  batcher b(dense, 3, 7);
  batcher again(sparse, 3, 7);
  for (int step = 0; step < 20; ++step) {
    const std::vector<std::uint32_t> order = a.next_batch().examples;
    CHECK(order == b.next_batch().examples);
    CHECK(order == again.next_batch().examples);
  }
}

TEST_CASE("sparse batches stop allocating once the buffers have grown") {
  const auto set = counted_set(12);
  batcher b(set, 12, 3);  // every batch holds every example: the same nonzeros
  const batch& first = b.next_batch();
  const std::uint64_t* keys = first.keys.data();
  const float* values = first.values.data();
  const std::uint64_t* offsets = first.offsets.data();
  for (int step = 0; step < 10; ++step) {
    const batch& next = b.next_batch();
    CHECK(next.keys.data() == keys);
    CHECK(next.values.data() == values);
    CHECK(next.offsets.data() == offsets);
    CHECK(next.keys.size() == 18);
  }
}

TEST_CASE("--data-format libsvm --input=memory loads both files, and a ps's summary reads neither") {
  testing::temp_dir dir("sparse-data");
  std::ofstream(dir / "train.libsvm") << libsvm_text(counted_examples(50));
  std::ofstream(dir / "test.libsvm") << libsvm_text(counted_examples(7));
  const options opts =
      testing::parse({"--data-format=libsvm", "--train-file=" + (dir / "train.libsvm"),
                      "--test-file=" + (dir / "test.libsvm"), "--validation-size=10",
                      "--batch-size=40", "--model=logreg", "--sparse-rows=4096", "--input=memory"});
  const data_splits data = load_job_data(opts);
  CHECK(data.train->sparse());
  CHECK(data.train->size() == 40);
  CHECK(data.validation->size() == 10);
  CHECK(data.test->size() == 7);
  CHECK(data.classes == 2);
  CHECK(keys_of(*data.train, 0) == std::vector<std::uint64_t>{100, 101});  // example 10
  const data_summary summary = summarize_job_data(opts);
  CHECK(summary.shape.dims == std::vector<std::size_t>{0});
  CHECK(summary.classes == 2);
  const auto m = make_builtin_model(request_for(opts, summary).choice, request_for(opts, summary));
  CHECK(m->layout().variables_text() == "bias 1x1,weights rows 4096x1");
  CHECK(m->layout() == make_builtin_model(request_for(opts, data.summary()).choice,
                                          request_for(opts, data.summary()))
                           ->layout());
  // The summary does not open the files: a ps need not have them.
  const options elsewhere = testing::parse({"--data-format=libsvm", "--train-file=/nonexistent/a",
                                            "--test-file=/nonexistent/b", "--model=logreg"});
  CHECK(summarize_job_data(elsewhere).classes == 2);
  CHECK_THROWS_WITH_AS(load_job_data(elsewhere),
                       "data: /nonexistent/a: cannot open: No such file or directory", data_error);
  const options too_big = testing::parse(
      {"--data-format=libsvm", "--train-file=" + (dir / "train.libsvm"),
       "--test-file=" + (dir / "test.libsvm"), "--validation-size=10", "--batch-size=41",
       "--input=memory"});
  const std::string expected = "data: --batch-size=41 exceeds the 40 training examples of " +
                               (dir / "train.libsvm") + " (--validation-size=10 are held out)";
  CHECK_THROWS_WITH_AS(load_job_data(too_big), expected.c_str(), data_error);
}

TEST_CASE("streamed libsvm holds the validation split only; the workers' shares are planned") {
  testing::temp_dir dir("sparse-data");
  std::ofstream(dir / "train.libsvm") << libsvm_text(counted_examples(50));
  std::ofstream(dir / "test.libsvm") << libsvm_text(counted_examples(7));
  const options opts = testing::parse(
      {"--data-format=libsvm", "--train-file=" + (dir / "train.libsvm"),
       "--test-file=" + (dir / "test.libsvm"), "--validation-size=10", "--batch-size=100",
       "--model=logreg", "--sparse-rows=4096", "--worker-hosts=a:1,a:2,a:3"});
  const data_splits data = load_job_data(opts);  // a batch larger than the set: a pass ends short
  CHECK_FALSE(data.train);
  CHECK_FALSE(data.test);
  REQUIRE(data.stream);
  CHECK(data.stream->train.size() == 3);
  CHECK(data.validation->size() == 10);
  CHECK(keys_of(*data.validation, 2) == std::vector<std::uint64_t>{20, 21});
  CHECK(data.classes == 2);
  std::size_t lines = 0;
  for (const auto& plan : data.stream->train) lines += plan.lines.value_or(0);
  CHECK(lines == 40);
  const options eval = testing::parse({"eval", "--data-format=libsvm",
                                       "--test-file=" + (dir / "test.libsvm"), "--model=logreg"});
  const data_splits test_only = load_data_splits(eval);
  CHECK(test_only.stream->train.empty());
  CHECK(test_only.stream->test.size() == 1);
}

}  // namespace downpour::test_sparse_data
