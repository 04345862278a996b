// Learning rate, EMA and the element-wise updates. Every node (reference
// trainer, parameter shards) uses these same functions, so a one-worker
// cluster reproduces the reference trainer bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>

namespace downpour {

struct lr_schedule {
  float learning_rate = 0.01f;
  float decay_rate = 0.99f;
  std::int64_t decay_steps = 600;
  bool staircase = false;
};

// lr = learning_rate * decay_rate^(global_step / decay_steps), in float32 like
// tf.train.exponential_decay; global_step is read before the step's increment.
float learning_rate_at(const lr_schedule& s, std::int64_t global_step);

// min(decay, (1 + n) / (10 + n)) with n = global_step as float32
// (ExponentialMovingAverage with num_updates).
float ema_decay_at(float decay, std::int64_t global_step);

// params[i] -= lr * grad[i] over n floats (GradientDescentOptimizer).
void apply_sgd(float* params, const float* grad, std::size_t n, float lr);

// shadow[i] -= (1 - decay) * (shadow[i] - params[i]) over n floats.
void update_ema(float* shadow, const float* params, std::size_t n, float decay);

// params[i] -= lr * (sum_k grads[k][i]) / count: the mean of count gradients
// accumulated as a sum (SyncReplicasOptimizer's MEAN reduction).
void apply_mean_sgd(float* params, const float* grad_sum, std::size_t n, float lr,
                    std::size_t count);

// True if no value is NaN or inf. Branch-free, so it vectorizes: a shard
// checks every pushed float.
bool all_finite(const float* v, std::size_t n);

// The shard's and the worker's forms of apply_sgd and apply_mean_sgd, bit
// for bit the same arithmetic, with a separate output: the shard writes the
// new parameters over the pushed gradient (out == grad), so the current ones
// stay intact for their readers (pull replies) and until the update is
// known to be good; a worker writes its own update into a buffer of its own.

// out[i] = params[i] - lr * grad[i]; false if any gradient was NaN or inf
// (checked in the same pass), and then out holds garbage.
bool checked_sgd_to(float* out, const float* params, const float* grad, std::size_t n, float lr);

// out[i] = params[i] - lr * grad[i]: a worker's copy of its own update, the
// same bits as the shard's (replay_offer).
void sgd_to(float* out, const float* params, const float* grad, std::size_t n, float lr);

// out[i] = params[i] - lr * (grad_sum[i] * (1 / count)): the mean of a sum.
void mean_sgd_to(float* out, const float* params, const float* grad_sum, std::size_t n, float lr,
                 std::size_t count);

}  // namespace downpour
