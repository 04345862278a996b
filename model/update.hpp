// The element-wise updates: the one set of kernels every node uses (the
// reference trainer, the parameter shards, a worker's copy of its own
// update), so a one-worker cluster reproduces the reference trainer bit for
// bit. Each names what it writes; `out` may be the same buffer as `params`
// (an update in place) or as the gradient (a shard writes its new
// parameters over the pushed gradient, so the current ones stay intact for
// their readers until the update is known to be good).
#pragma once

#include <cstddef>

namespace downpour {

// out[i] = params[i] - lr * grad[i] (GradientDescentOptimizer).
void sgd_into(float* out, const float* params, const float* grad, std::size_t n, float lr);

// The same bits as sgd_into, and true if no gradient was NaN or inf, checked
// in the same pass; on false out holds garbage.
bool checked_sgd_into(float* out, const float* params, const float* grad, std::size_t n,
                      float lr);

// out[i] = params[i] - lr * (grad_sum[i] * (1 / count)): the mean of count
// gradients accumulated as a sum (SyncReplicasOptimizer's MEAN reduction).
void mean_sgd_into(float* out, const float* params, const float* grad_sum, std::size_t n,
                   float lr, std::size_t count);

// shadow[i] -= (1 - decay) * (shadow[i] - params[i]) (ExponentialMovingAverage).
void update_ema(float* shadow, const float* params, std::size_t n, float decay);

// True if no value is NaN or inf. Branch-free, so it vectorizes: a shard
// checks every pushed float.
bool all_finite(const float* v, std::size_t n);

}  // namespace downpour
