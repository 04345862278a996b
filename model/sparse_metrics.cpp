#include "model/sparse_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

namespace downpour {

double logistic_loss(double logit, std::uint8_t label) {
  // softplus(z) - y z, with softplus(z) = max(z, 0) + log1p(exp(-|z|)).
  const double softplus = std::max(logit, 0.0) + std::log1p(std::exp(-std::abs(logit)));
  return softplus - (label ? logit : 0.0);
}

double sigmoid(double logit) {
  if (logit >= 0) return 1.0 / (1.0 + std::exp(-logit));
  const double e = std::exp(logit);
  return e / (1.0 + e);
}

namespace {

// Mann-Whitney: the rank sum of the positives, tied logits sharing their mean rank.
double area_under_roc(const std::vector<float>& logits, const std::vector<std::uint8_t>& labels,
                      std::size_t positives) {
  const std::size_t n = logits.size();
  const std::size_t negatives = n - positives;
  if (positives == 0 || negatives == 0) return std::numeric_limits<double>::quiet_NaN();
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(),
            [&](std::uint32_t a, std::uint32_t b) { return logits[a] < logits[b]; });
  double positive_ranks = 0.0;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    std::size_t tied_positives = 0;
    for (; j < n && logits[order[j]] == logits[order[i]]; ++j) tied_positives += labels[order[j]];
    const double mean_rank = 0.5 * static_cast<double>(i + 1 + j);  // ranks i+1 .. j
    positive_ranks += mean_rank * static_cast<double>(tied_positives);
    i = j;
  }
  const double p = static_cast<double>(positives);
  return (positive_ranks - p * (p + 1) / 2) / (p * static_cast<double>(negatives));
}

}  // namespace

binary_metrics score_logits(const std::vector<float>& logits,
                            const std::vector<std::uint8_t>& labels) {
  if (logits.size() != labels.size() || logits.empty())
    throw std::invalid_argument("score_logits: " + std::to_string(logits.size()) +
                                " logits for " + std::to_string(labels.size()) +
                                " labels (expected as many, at least one)");
  binary_metrics m;
  m.examples = logits.size();
  std::size_t positives = 0;
  std::size_t correct = 0;
  for (std::size_t i = 0; i < logits.size(); ++i) {
    m.log_loss += logistic_loss(logits[i], labels[i]);
    positives += labels[i];
    correct += (logits[i] > 0) == (labels[i] != 0);
  }
  const double n = static_cast<double>(m.examples);
  m.log_loss /= n;
  m.accuracy = static_cast<double>(correct) / n;
  m.positive_rate = static_cast<double>(positives) / n;
  m.auc = area_under_roc(logits, labels, positives);
  return m;
}

}  // namespace downpour
