#include "data/dataset.hpp"

#include <algorithm>
#include <functional>
#include <numeric>
#include <utility>

namespace downpour {

std::size_t data_shape::features() const {
  return std::accumulate(dims.begin(), dims.end(), std::size_t{1}, std::multiplies<>());
}

namespace {

class range_view final : public dataset {
 public:
  range_view(std::shared_ptr<const dataset> base, std::size_t first, std::size_t count)
      : base_(std::move(base)), first_(first), count_(count) {}
  std::size_t size() const override { return count_; }
  std::size_t features() const override { return base_->features(); }
  void copy_features(std::size_t i, float* out) const override {
    base_->copy_features(first_ + i, out);
  }
  std::int32_t label(std::size_t i) const override { return base_->label(first_ + i); }
  bool sparse() const override { return base_->sparse(); }
  sparse_row sparse_features(std::size_t i) const override {
    return base_->sparse_features(first_ + i);
  }

 private:
  std::shared_ptr<const dataset> base_;
  std::size_t first_;
  std::size_t count_;
};

// The largest label of the set; throws for a negative one (a class index).
std::int32_t max_label(const named_dataset& d) {
  std::int32_t most = 0;
  for (std::size_t i = 0; i < d.set->size(); ++i) {
    const std::int32_t y = d.set->label(i);
    if (y < 0)
      throw data_error("data: " + d.name + ": example " + std::to_string(i) + " has label " +
                       std::to_string(y) + " (expected a class index >= 0)");
    most = std::max(most, y);
  }
  return most;
}

void check_features(const named_dataset& test, const named_dataset& train, std::size_t expected) {
  if (test.set->sparse() != train.set->sparse())
    throw data_error("data: " + test.name + ": examples are " +
                     (test.set->sparse() ? "sparse" : "dense") + " but those in " + train.name +
                     " are " + (train.set->sparse() ? "sparse" : "dense"));
  if (test.set->features() == expected) return;
  throw data_error("data: " + test.name + ": examples have " +
                   std::to_string(test.set->features()) + " features but those in " + train.name +
                   " have " + std::to_string(expected));
}

void check_validation_size(const named_dataset& train, std::size_t validation_size) {
  const std::size_t n = train.set->size();
  const std::string what =
      "data: " + train.name + ": validation size " + std::to_string(validation_size);
  if (validation_size > n)
    throw data_error(what + " exceeds the " + std::to_string(n) + " training examples");
  if (validation_size == n)
    throw data_error(what + " takes all " + std::to_string(n) +
                     " training examples, leaving none to train on");
}

}  // namespace

std::shared_ptr<const dataset> dataset_range(std::shared_ptr<const dataset> base, std::size_t first,
                                             std::size_t count) {
  if (first > base->size() || count > base->size() - first)
    throw data_error("data: examples " + std::to_string(first) + ".." +
                     std::to_string(first + count) + " are past the end of a set of " +
                     std::to_string(base->size()));
  return std::make_shared<range_view>(std::move(base), first, count);
}

data_splits split_data(const named_dataset& train, const named_dataset& test, data_shape shape,
                       std::size_t validation_size) {
  check_features(test, train, shape.features());
  check_validation_size(train, validation_size);
  data_splits splits;
  splits.classes = 1 + static_cast<std::size_t>(std::max(max_label(train), max_label(test)));
  // Sparse sets are libsvm's binary labels: two classes even when one class
  // is missing from both files, as summarize_job_data says without reading them.
  if (train.set->sparse()) splits.classes = std::max<std::size_t>(splits.classes, 2);
  splits.validation = dataset_range(train.set, 0, validation_size);
  splits.train = dataset_range(train.set, validation_size, train.set->size() - validation_size);
  splits.test = test.set;
  splits.shape = std::move(shape);
  return splits;
}

}  // namespace downpour
