#include "data/dataset.hpp"

#include <algorithm>
#include <functional>
#include <numeric>
#include <optional>
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

class dense_set final : public dataset {
 public:
  dense_set(std::size_t features, std::vector<float> values, std::vector<std::int32_t> labels)
      : features_(features), values_(std::move(values)), labels_(std::move(labels)) {}
  std::size_t size() const override { return labels_.size(); }
  std::size_t features() const override { return features_; }
  void copy_features(std::size_t i, float* out) const override {
    std::copy_n(values_.data() + i * features_, features_, out);
  }
  std::int32_t label(std::size_t i) const override { return labels_[i]; }

 private:
  std::size_t features_;
  std::vector<float> values_;  // size() x features_, row-major
  std::vector<std::int32_t> labels_;
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

// The smallest class below classes without a training example, if any.
std::optional<std::int32_t> first_missing_class(const dataset& train, std::size_t classes) {
  std::vector<bool> seen(classes, false);
  for (std::size_t i = 0; i < train.size(); ++i) seen[static_cast<std::size_t>(train.label(i))] = true;
  const auto gap = std::find(seen.begin(), seen.end(), false);
  if (gap == seen.end()) return std::nullopt;
  return static_cast<std::int32_t>(gap - seen.begin());
}

// A training label past a class that has no example: taken for damage (a
// byte of 200 among the labels 0 to 9), never for 191 more classes.
void check_no_gap(const named_dataset& train, std::size_t classes) {
  const auto gap = first_missing_class(*train.set, classes);
  if (!gap) return;
  for (std::size_t i = 0; i < train.set->size(); ++i)
    if (train.set->label(i) > *gap)
      throw data_error("data: " + train.name + ": example " + std::to_string(i) + " has label " +
                       std::to_string(train.set->label(i)) + ", but no training example has label " +
                       std::to_string(*gap) + " (expected the classes 0 to " +
                       std::to_string(*gap - 1) + " of the other labels, each with examples)");
}

// A test label must be a class the model is built for.
void check_test_labels(const named_dataset& test, std::size_t classes) {
  for (std::size_t i = 0; i < test.set->size(); ++i) {
    const std::int32_t y = test.set->label(i);
    if (y < 0 || static_cast<std::size_t>(y) >= classes)
      throw data_error("data: " + test.name + ": example " + std::to_string(i) + " has label " +
                       std::to_string(y) + ", not a class of the training data (expected 0 to " +
                       std::to_string(classes - 1) + ")");
  }
}

}  // namespace

std::size_t class_count(const named_dataset& train, const named_dataset& test) {
  // libsvm's labels are 0 or 1 by the format: two classes even when one is
  // missing from both files, as summarize_job_data says without reading them.
  if (train.set->sparse()) return 2;
  const std::size_t classes = 1 + static_cast<std::size_t>(max_label(train));
  check_no_gap(train, classes);
  check_test_labels(test, classes);
  return classes;
}

namespace {

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

std::shared_ptr<const dataset> dense_dataset(std::size_t features, std::vector<float> values,
                                             std::vector<std::int32_t> labels) {
  if (features == 0 || values.size() != labels.size() * features)
    throw data_error("data: " + std::to_string(values.size()) + " feature values for " +
                     std::to_string(labels.size()) + " examples of " + std::to_string(features) +
                     " features (expected features >= 1 and values for every example)");
  return std::make_shared<dense_set>(features, std::move(values), std::move(labels));
}

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
  splits.classes = class_count(train, test);
  splits.validation = dataset_range(train.set, 0, validation_size);
  splits.train = dataset_range(train.set, validation_size, train.set->size() - validation_size);
  splits.test = test.set;
  splits.shape = std::move(shape);
  return splits;
}

}  // namespace downpour
