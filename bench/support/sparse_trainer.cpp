#include "bench/support/sparse_trainer.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace downpour {
namespace {

constexpr std::size_t kEvalBatch = 4096;

sparse_table_spec table_spec(const logreg_settings& s, std::uint64_t rows) {
  sparse_table_spec spec;
  spec.rows = rows;
  spec.dim = 1;
  spec.update.rule = s.optimizer;
  return spec;
}

}  // namespace

logreg_trainer::logreg_trainer(const logreg_settings& settings)
    : settings_(settings),
      weights_(table_spec(settings, settings.rows)),
      bias_(table_spec(settings, 1)),
      batch_(sparse_logreg(settings.rows, settings.hash_seed)) {
  if (settings.batch_size == 0) throw std::invalid_argument("logistic regression: batch size 0");
  if (!std::isfinite(settings.learning_rate) || settings.learning_rate <= 0)
    throw std::invalid_argument("logistic regression: learning rate " +
                                std::to_string(settings.learning_rate) +
                                " (expected a finite number above 0)");
}

logreg_trainer::pass logreg_trainer::train(const sparse_examples& set) {
  pass done;
  double loss_sum = 0.0;
  keyed_rows rows;
  keyed_rows bias_row{{0}, {0.0f}};
  for (std::size_t begin = 0; begin < set.size(); begin += settings_.batch_size) {
    const std::size_t end = std::min(set.size(), begin + settings_.batch_size);
    rows.keys = batch_.gather(set, begin, end);
    const std::vector<float> weights = weights_.pull(rows.keys);
    const logreg_gradient& g = batch_.loss_and_gradient(weights.data(), bias());
    rows.values = g.rows;
    bias_row.values[0] = g.bias;
    if (const auto why = weights_.push(rows, settings_.learning_rate))
      throw std::runtime_error("logistic regression: step of examples " + std::to_string(begin) +
                               ".." + std::to_string(end) + " refused: " + to_string(*why));
    if (const auto why = bias_.push(bias_row, settings_.learning_rate))
      throw std::runtime_error(std::string("logistic regression: bias step refused: ") +
                               to_string(*why));
    loss_sum += g.loss;
    ++done.batches;
    done.rows += rows.keys.size();
  }
  if (done.batches) done.mean_loss = loss_sum / static_cast<double>(done.batches);
  return done;
}

binary_metrics logreg_trainer::evaluate(const sparse_examples& set) {
  std::vector<float> logits;
  logits.reserve(set.size());
  for (std::size_t begin = 0; begin < set.size(); begin += kEvalBatch) {
    const std::size_t end = std::min(set.size(), begin + kEvalBatch);
    const std::vector<float> weights = weights_.pull(batch_.gather(set, begin, end));
    const std::vector<float>& z = batch_.logits(weights.data(), bias());
    logits.insert(logits.end(), z.begin(), z.end());
  }
  return score_logits(logits, set.labels);
}

float logreg_trainer::bias() const { return bias_.pull({0})[0]; }

}  // namespace downpour
