// A data set as the runtime reads it: examples of a fixed number of float
// features with one integer class label each. The IDX reader (data/idx.hpp)
// and the CSV reader (data/csv.hpp) are two implementations; implement
// `dataset` to feed your own format.
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
};

// The three splits of a job's data.
struct data_splits {
  std::shared_ptr<const dataset> train;
  std::shared_ptr<const dataset> validation;  // may hold 0 examples
  std::shared_ptr<const dataset> test;
  data_shape shape;
  std::size_t classes = 0;  // 1 + the largest label seen
};

}  // namespace downpour
