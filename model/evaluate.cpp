#include <algorithm>

#include "model/model.hpp"

namespace downpour {
namespace {

constexpr std::size_t chunk_size = 1000;

// A data set read a chunk at a time into one reused batch.
class chunk_reader {
 public:
  chunk_reader(const dataset& set, std::size_t chunk) : set_(set) {
    b_.input_size = set.features();
    b_.x.resize(chunk * b_.input_size);
    b_.y.resize(chunk);
  }
  // Examples first .. first + n - 1.
  const batch& read(std::size_t first, std::size_t n) {
    b_.size = n;
    for (std::size_t i = 0; i < n; ++i) {
      set_.copy_features(first + i, b_.x.data() + i * b_.input_size);
      b_.y[i] = set_.label(first + i);
    }
    return b_;
  }

 private:
  const dataset& set_;
  batch b_;
};

// Right answers per class.
class tally {
 public:
  explicit tally(std::size_t classes) : correct_(classes, 0), seen_(classes, 0) {}
  void add(std::size_t predicted, std::int32_t label, std::size_t example) {
    const auto c = static_cast<std::size_t>(label);
    if (label < 0 || c >= seen_.size())
      throw data_error("data: example " + std::to_string(example) + " has label " +
                       std::to_string(label) + " but the model has " +
                       std::to_string(seen_.size()) + " classes");
    ++seen_[c];
    if (predicted == c) ++correct_[c];
  }
  accuracy_report report(std::size_t examples) const {
    accuracy_report r;
    std::size_t total_correct = 0;
    for (std::size_t c = 0; c < seen_.size(); ++c) {
      total_correct += correct_[c];
      r.per_class.push_back(seen_[c] ? static_cast<double>(correct_[c]) / seen_[c] : 0.0);
    }
    r.overall = examples ? static_cast<double>(total_correct) / examples : 0.0;
    return r;
  }

 private:
  std::vector<std::size_t> correct_, seen_;
};

}  // namespace

accuracy_report evaluate(const model& m, const float* params, const dataset& set) {
  const std::size_t classes = m.classes();
  const std::size_t chunk = std::max<std::size_t>(1, std::min(chunk_size, set.size()));
  auto ws = m.workspace(chunk);
  chunk_reader reader(set, chunk);
  tally counts(classes);
  for (std::size_t start = 0; start < set.size(); start += chunk) {
    const batch& b = reader.read(start, std::min(chunk, set.size() - start));
    const float* scores = ws->scores(params, b);
    for (std::size_t i = 0; i < b.size; ++i) {
      const float* row = scores + i * classes;
      const auto predicted = static_cast<std::size_t>(std::max_element(row, row + classes) - row);
      counts.add(predicted, b.y[i], start + i);
    }
  }
  return counts.report(set.size());
}

}  // namespace downpour
