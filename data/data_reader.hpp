// A program's own data format: a reader it registers under a name
// (runtime/cli/app.hpp, `application::readers`) that `--data-format=NAME`
// then uses in every role and command, as the runtime uses its CSV reader.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "data/dataset.hpp"
#include "data/sparse_examples.hpp"

namespace downpour {

// What a reader is given: the job's file options.
struct data_request {
  std::string format;      // the --data-format name the reader was registered under
  std::string train_file;  // --train-file; empty for eval, which reads the test files alone
  std::string test_file;   // --test-file
  std::size_t validation_size = 0;  // --validation-size: training examples held out
  std::size_t max_line_bytes = 0;   // --max-line-bytes: the longest line to read
};

// Reads the files into the job's splits: split_data (data/dataset.hpp) over
// a training and a test set of dense_dataset or sparse_dataset examples does
// it, with the labels checked. Called once per process on every node that
// needs the data (a ps too: its model is built for the data's shape). Throws
// data_error, one line naming the file and the fault, for a bad file: the
// node logs it and exits 1 like for any data file of the built-in formats.
using data_reader = std::function<data_splits(const data_request&)>;

// Readers by their --data-format name; a name of a built-in format (idx,
// csv, libsvm, criteo) cannot be taken.
using data_readers = std::map<std::string, data_reader>;

// Sparse examples as a data set (sparse(), features() 0): labels 0 or 1,
// as the built-in sparse models take them.
std::shared_ptr<const dataset> sparse_dataset(sparse_examples examples);

// The splits reader gives for request, checked for what the runtime relies
// on: a test set (and a training set unless request.train_file is empty),
// dense sets of shape.features() features each, or sparse sets of shape {0},
// and at least 2 classes; no validation set is one of 0 examples. Throws
// data_error naming the format otherwise.
data_splits read_data(const data_reader& reader, const data_request& request);

}  // namespace downpour
