// A data set as the runtime reads it: examples of a fixed number of float
// features with one integer class label each. The IDX reader (data/idx.hpp)
// and the CSV reader (data/csv.hpp) are two implementations; a program reads
// its own format with a reader it registers (data/data_reader.hpp), which
// returns examples held by dense_dataset below, by sparse_dataset or by a
// `dataset` of its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace downpour {

// Thrown for any bad data file; what() is one line naming the file (and the
// line and column where the format has them) and the fault.
struct data_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The layout of one example's features: {height, width, channels} for
// images (a CNN needs it), {features} otherwise.
struct data_shape {
  std::vector<std::size_t> dims;
  std::size_t features() const;  // the product of dims
};

// Immutable once loaded; shared by every worker of a node.
class dataset {
 public:
  virtual ~dataset() = default;
  virtual std::size_t size() const = 0;
  virtual std::size_t features() const = 0;
  // Writes features() floats of example i (i < size()).
  virtual void copy_features(std::size_t i, float* out) const = 0;
  virtual std::int32_t label(std::size_t i) const = 0;

  // Sparse data sets (libsvm) have no fixed features (features() is 0):
  // example i is a few (index, value) pairs, indices ascending.
  struct sparse_row {
    const std::uint64_t* keys = nullptr;
    const float* values = nullptr;
    std::size_t count = 0;
  };
  virtual bool sparse() const { return false; }
  virtual sparse_row sparse_features(std::size_t /*i*/) const { return {}; }
};

// What a model is built for: the examples' shape and the number of classes.
struct data_summary {
  data_shape shape;
  std::size_t classes = 0;  // class_count of the data
};

struct streamed_input;  // data/streamed_input.hpp

// The three splits of a job's data. Streamed input (docs/input.md) holds no
// training or test set in memory: train and test are null, and `stream`
// says how each worker reads its share and the evaluation the test files.
struct data_splits {
  std::shared_ptr<const dataset> train;
  std::shared_ptr<const dataset> validation;  // may hold 0 examples
  std::shared_ptr<const dataset> test;
  data_shape shape;
  std::size_t classes = 0;  // class_count of the data
  std::shared_ptr<const streamed_input> stream;
  data_summary summary() const { return {shape, classes}; }
};

// Examples held in memory: example i's features are
// values[i * features .. (i + 1) * features), its label labels[i].
// Throws data_error unless features >= 1 and values holds labels.size() *
// features floats.
std::shared_ptr<const dataset> dense_dataset(std::size_t features, std::vector<float> values,
                                             std::vector<std::int32_t> labels);

// Examples first .. first + count - 1 of base as a data set of their own,
// sharing base's storage. Throws data_error past base's end.
std::shared_ptr<const dataset> dataset_range(std::shared_ptr<const dataset> base,
                                             std::size_t first, std::size_t count);

// A data set file as error messages name it, with its examples.
struct named_dataset {
  std::string name;  // the file (or directory) the examples came from
  std::shared_ptr<const dataset> set;
};

// The classes of a job's data: 1 + the largest training label (2 for sparse
// sets: libsvm's labels are 0 or 1). Every class below it must have a
// training example and every test label must be one of them, so that a
// damaged label (a byte of 200 among 0 to 9) is an error instead of a model
// of 201 classes. Throws data_error naming the file, the example and its label.
std::size_t class_count(const named_dataset& train, const named_dataset& test);

// The splits of TensorFlow's read_data_sets: the first validation_size
// training examples held out, the rest to train on (at least one). shape is
// the training examples'; checks that the test examples have as many
// features, and the labels (class_count).
// Throws data_error naming the file.
data_splits split_data(const named_dataset& train, const named_dataset& test, data_shape shape,
                       std::size_t validation_size);

}  // namespace downpour
