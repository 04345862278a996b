#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>

#include "model/model.hpp"
#include "model/sparse_metrics.hpp"

namespace downpour {
namespace {

constexpr std::size_t chunk_size = 1000;

// A data set read a chunk at a time into one reused batch: dense features
// in x, or a sparse set's in compressed sparse rows.
class chunk_reader {
 public:
  chunk_reader(const dataset& set, std::size_t chunk) : set_(set), sparse_(set.sparse()) {
    b_.input_size = set.features();
    b_.x.resize(chunk * b_.input_size);
    b_.y.resize(chunk);
    if (sparse_) b_.offsets.assign(chunk + 1, 0);
  }
  // Examples first .. first + n - 1.
  const batch& read(std::size_t first, std::size_t n) {
    b_.size = n;
    b_.keys.clear();
    b_.values.clear();
    for (std::size_t i = 0; i < n; ++i) {
      if (sparse_) {
        const dataset::sparse_row row = set_.sparse_features(first + i);
        b_.keys.insert(b_.keys.end(), row.keys, row.keys + row.count);
        b_.values.insert(b_.values.end(), row.values, row.values + row.count);
        b_.offsets[i + 1] = b_.keys.size();
      } else {
        set_.copy_features(first + i, b_.x.data() + i * b_.input_size);
      }
      b_.y[i] = set_.label(first + i);
    }
    return b_;
  }

 private:
  const dataset& set_;
  const bool sparse_;
  batch b_;
};

// -log softmax(scores)[label], in double: the log-sum-exp shifted by the
// largest score so that no exp overflows.
double cross_entropy(const float* scores, std::size_t classes, std::size_t label) {
  const double top = *std::max_element(scores, scores + classes);
  double sum = 0.0;
  for (std::size_t c = 0; c < classes; ++c) sum += std::exp(static_cast<double>(scores[c]) - top);
  return top + std::log(sum) - static_cast<double>(scores[label]);
}

// Right answers per class, the summed log loss, and for two classes each
// example's margin for the AUC.
class tally {
 public:
  explicit tally(std::size_t classes) : correct_(classes, 0), seen_(classes, 0) {}
  void add(const float* scores, std::int32_t label, std::size_t example) {
    const std::size_t classes = seen_.size();
    const auto c = static_cast<std::size_t>(label);
    if (label < 0 || c >= classes)
      throw data_error("data: example " + std::to_string(example) + " has label " +
                       std::to_string(label) + " but the model has " + std::to_string(classes) +
                       " classes");
    const auto predicted =
        static_cast<std::size_t>(std::max_element(scores, scores + classes) - scores);
    ++seen_[c];
    if (predicted == c) ++correct_[c];
    log_loss_ += cross_entropy(scores, classes, c);
    if (classes == 2) {
      margins_.push_back(scores[1] - scores[0]);
      labels_.push_back(static_cast<std::uint8_t>(c));
    }
  }
  accuracy_report report(std::size_t examples) const {
    accuracy_report r;
    r.examples = examples;
    std::size_t total_correct = 0;
    for (std::size_t c = 0; c < seen_.size(); ++c) {
      total_correct += correct_[c];
      r.per_class.push_back(seen_[c] ? static_cast<double>(correct_[c]) / seen_[c] : 0.0);
    }
    r.overall = examples ? static_cast<double>(total_correct) / examples : 0.0;
    r.log_loss = examples ? log_loss_ / static_cast<double>(examples) : 0.0;
    // NaN-free like per_class: a set of one class has no AUC and reads 0.
    if (!margins_.empty()) {
      const double auc = score_logits(margins_, labels_).auc;
      r.auc = std::isnan(auc) ? 0.0 : auc;
    }
    return r;
  }

 private:
  std::vector<std::size_t> correct_, seen_;
  double log_loss_ = 0.0;
  std::vector<float> margins_;
  std::vector<std::uint8_t> labels_;
};

using chunk_scorer = std::function<const float*(model_workspace&, const batch&)>;

// Each scorer's tally over the batches next_chunk hands out (nullptr: done).
template <class NextChunk>
std::vector<accuracy_report> evaluate_chunks(const model& m, std::size_t chunk,
                                             const std::vector<chunk_scorer>& scorers,
                                             NextChunk next_chunk) {
  const std::size_t classes = m.classes();
  auto ws = m.workspace(chunk);
  std::vector<tally> counts(scorers.size(), tally(classes));
  std::size_t seen = 0;
  while (const batch* b = next_chunk()) {
    for (std::size_t s = 0; s < scorers.size(); ++s) {
      const float* scores = scorers[s](*ws, *b);
      for (std::size_t i = 0; i < b->size; ++i)
        counts[s].add(scores + i * classes, b->y[i], seen + i);
    }
    seen += b->size;
  }
  std::vector<accuracy_report> out;
  for (const auto& c : counts) out.push_back(c.report(seen));
  return out;
}

accuracy_report evaluate_set(const model& m, const dataset& set, const chunk_scorer& score) {
  const std::size_t chunk = std::max<std::size_t>(1, std::min(chunk_size, set.size()));
  chunk_reader reader(set, chunk);
  std::size_t start = 0;
  return evaluate_chunks(m, chunk, {score}, [&]() -> const batch* {
    if (start >= set.size()) return nullptr;
    const batch& b = reader.read(start, std::min(chunk, set.size() - start));
    start += b.size;
    return &b;
  })[0];
}

// Scores with the rows of the batch read from rows (none for no rows: a
// row source may be a round trip to every shard).
const float* scores_with_rows(model_workspace& ws, const float* params, const row_source& rows,
                              const row_space& space, const batch& b) {
  const std::vector<std::uint64_t>& keys = ws.touched_rows(b);
  const std::vector<float> values = keys.empty() ? std::vector<float>{} : rows(keys);
  const std::size_t expected = space.values_for(keys);
  if (values.size() != expected)
    throw std::invalid_argument("evaluate: the row source gave " + std::to_string(values.size()) +
                                " values for " + std::to_string(keys.size()) + " rows of " +
                                std::to_string(expected) + " values");
  return ws.scores(params, values.data(), b);
}


}  // namespace

accuracy_report evaluate(const model& m, const float* params, const dataset& set) {
  return evaluate_set(m, set,
                      [&](model_workspace& ws, const batch& b) { return ws.scores(params, b); });
}

accuracy_report evaluate(const model& m, const float* params, const row_source& rows,
                         const dataset& set) {
  const row_space space = m.layout().rows();
  return evaluate_set(m, set, [&](model_workspace& ws, const batch& b) {
    return scores_with_rows(ws, params, rows, space, b);
  });
}

std::vector<accuracy_report> evaluate_each(const model& m, const std::vector<const float*>& params,
                                           const row_source* rows, batch_source& source,
                                           std::size_t chunk) {
  const row_space space = m.layout().rows();
  std::vector<chunk_scorer> scorers;
  for (const float* p : params) {
    if (rows)
      scorers.push_back([=](model_workspace& ws, const batch& b) {
        return scores_with_rows(ws, p, *rows, space, b);
      });
    else
      scorers.push_back([=](model_workspace& ws, const batch& b) { return ws.scores(p, b); });
  }
  return evaluate_chunks(m, chunk, scorers, [&] { return source.next(); });
}

}  // namespace downpour
