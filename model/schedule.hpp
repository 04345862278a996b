// The learning-rate schedule and the EMA decay, as TensorFlow computes them
// (float32); the updates that use them are in model/update.hpp.
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

}  // namespace downpour
