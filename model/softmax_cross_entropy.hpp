// The softmax cross-entropy of class logits against integer labels, and its
// gradient: the loss every built-in model ends in (model/network_workspace.cpp,
// bench/support/handwritten_cnn.cpp). Instantiated for float (training) and double
// (the gradient checks).
#pragma once

#include <cstddef>
#include <cstdint>

namespace downpour {

// The summed loss logsumexp(row) - row[label] of rows logit rows (row-major,
// classes each), in double, stable for huge logits (the row's maximum is
// taken out before exp). Unless dlogits is null, also writes each row's
// gradient (softmax(row) - onehot(label)) * inv_n there: with inv_n = 1 /
// batch size, the gradient of the batch's mean loss, which is the sum's
// divided by the batch size. Every label must lie below classes.
template <class T>
double softmax_cross_entropy(const T* logits, const std::int32_t* labels, std::size_t rows,
                             std::size_t classes, T inv_n, T* dlogits);

}  // namespace downpour
