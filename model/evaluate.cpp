#include <algorithm>

#include "model/model.hpp"

namespace downpour {
namespace {

constexpr std::size_t chunk_size = 1000;

// Examples first .. first + b.size - 1 of set into b.
void fill(batch& b, const dataset& set, std::size_t first) {
  for (std::size_t i = 0; i < b.size; ++i) {
    set.copy_features(first + i, b.x.data() + i * b.input_size);
    b.y[i] = set.label(first + i);
  }
}

}  // namespace

accuracy_report evaluate(const model& m, const float* params, const dataset& set) {
  const std::size_t classes = m.classes();
  const std::size_t chunk = std::max<std::size_t>(1, std::min(chunk_size, set.size()));
  auto ws = m.workspace(chunk);
  batch b;
  b.input_size = set.features();
  b.x.resize(chunk * b.input_size);
  b.y.resize(chunk);
  std::vector<std::size_t> correct(classes, 0), seen(classes, 0);
  for (std::size_t start = 0; start < set.size(); start += chunk) {
    b.size = std::min(chunk, set.size() - start);
    fill(b, set, start);
    const float* scores = ws->scores(params, b);
    for (std::size_t i = 0; i < b.size; ++i) {
      const float* row = scores + i * classes;
      const auto predicted = static_cast<std::size_t>(std::max_element(row, row + classes) - row);
      const auto label = static_cast<std::size_t>(b.y[i]);
      if (b.y[i] < 0 || label >= classes)
        throw data_error("data: example " + std::to_string(start + i) + " has label " +
                         std::to_string(b.y[i]) + " but the model has " + std::to_string(classes) +
                         " classes");
      ++seen[label];
      if (predicted == label) ++correct[label];
    }
  }
  accuracy_report r;
  std::size_t total_correct = 0;
  for (std::size_t c = 0; c < classes; ++c) {
    total_correct += correct[c];
    r.per_class.push_back(seen[c] ? static_cast<double>(correct[c]) / seen[c] : 0.0);
  }
  r.overall = set.size() ? static_cast<double>(total_correct) / set.size() : 0.0;
  return r;
}

}  // namespace downpour
