// A program's own data reader (data/data_reader.hpp) as the runtime calls it
// (runtime/node/job.hpp): with the job's file options, its splits checked.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "runtime/node/job.hpp"

namespace test_data_reader {

using namespace downpour;

namespace {

// 6 examples of 2 features, labels 0 1 0 1 ...
std::shared_ptr<const dataset> six_examples() {
  std::vector<float> values(12);
  std::vector<std::int32_t> labels(6);
  for (std::size_t i = 0; i < 6; ++i) {
    values[2 * i] = static_cast<float>(i);
    labels[i] = static_cast<std::int32_t>(i % 2);
  }
  return dense_dataset(2, std::move(values), std::move(labels));
}

options registered_options(command_kind command) {
  options o;
  o.command = command;
  o.data_format = data_format_kind::registered;
  o.registered_format = "colon";
  o.train_file = "train.colon";
  o.test_file = "test.colon";
  o.validation_size = 2;
  o.batch_size = 2;
  return o;
}

}  // namespace

TEST_CASE("a registered reader gets the job's file options and its splits are the job's data") {
  std::vector<data_request> asked;
  data_readers readers;
  readers["colon"] = [&](const data_request& r) {
    asked.push_back(r);
    return split_data({r.train_file, six_examples()}, {r.test_file, six_examples()},
                      data_shape{{2}}, r.validation_size);
  };
  const data_splits data = load_job_data(registered_options(command_kind::train), readers);
  REQUIRE(asked.size() == 1);
  CHECK(asked[0].format == "colon");
  CHECK(asked[0].train_file == "train.colon");
  CHECK(asked[0].test_file == "test.colon");
  CHECK(asked[0].validation_size == 2);
  CHECK(data.train->size() == 4);
  CHECK(data.validation->size() == 2);
  CHECK(data.classes == 2);
  CHECK(summarize_job_data(registered_options(command_kind::train), readers).classes == 2);
  // eval reads the test files alone.
  load_data_splits(registered_options(command_kind::eval), readers);
  CHECK(asked.back().train_file.empty());
}

TEST_CASE("a reader's data error is the job's, and splits the runtime cannot use are refused") {
  data_readers readers;
  readers["colon"] = [](const data_request& r) -> data_splits {
    throw data_error("data: " + r.train_file + ":3: not a colon line");
  };
  const options o = registered_options(command_kind::train);
  CHECK_THROWS_WITH_AS(load_job_data(o, readers), "data: train.colon:3: not a colon line",
                       data_error);
  readers["colon"] = [](const data_request&) { return data_splits{}; };
  CHECK_THROWS_WITH_AS(load_job_data(o, readers),
                       "data: the reader of --data-format=colon returned no test set (expected "
                       "the splits of train.colon and test.colon)",
                       data_error);
  readers["colon"] = [](const data_request& r) {
    data_splits s = split_data({r.train_file, six_examples()}, {r.test_file, six_examples()},
                               data_shape{{2}}, 0);
    s.shape = data_shape{{3}};
    return s;
  };
  CHECK_THROWS_WITH_AS(load_job_data(o, readers),
                       "data: the reader of --data-format=colon gave a training set of 2 "
                       "features for a shape of 3 features (expected the same; 0 for sparse "
                       "examples)",
                       data_error);
  CHECK_THROWS_WITH_AS(dense_dataset(2, std::vector<float>(5), std::vector<std::int32_t>(3)),
                       "data: 5 feature values for 3 examples of 2 features (expected features "
                       ">= 1 and values for every example)",
                       data_error);
}

}  // namespace test_data_reader
