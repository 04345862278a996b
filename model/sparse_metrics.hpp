// How well logits of a binary classifier fit 0/1 labels: mean log loss, the
// area under the ROC curve and the accuracy at probability 0.5. Shared by the
// hashed logistic regression and the planted model it is measured against.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace downpour {

struct binary_metrics {
  std::size_t examples = 0;
  double log_loss = 0.0;
  double auc = 0.0;       // NaN when the labels are all one class
  double accuracy = 0.0;
  double positive_rate = 0.0;  // the share of labels 1
};

// -log p(label | logit), for p = sigmoid(logit), without overflow.
double logistic_loss(double logit, std::uint8_t label);

double sigmoid(double logit);

// Throws std::invalid_argument unless there are as many logits as labels, at
// least one. Ties in the logits count half in the AUC.
binary_metrics score_logits(const std::vector<float>& logits,
                            const std::vector<std::uint8_t>& labels);

}  // namespace downpour
