#include "model/schedule.hpp"

#include <algorithm>
#include <cmath>

namespace downpour {

float learning_rate_at(const lr_schedule& s, std::int64_t global_step) {
  float p = static_cast<float>(global_step) / static_cast<float>(s.decay_steps);
  if (s.staircase) p = std::floor(p);
  return s.learning_rate * std::pow(s.decay_rate, p);
}

float ema_decay_at(float decay, std::int64_t global_step) {
  float n = static_cast<float>(global_step);
  return std::min(decay, (1.0f + n) / (10.0f + n));
}

void apply_sgd(float* params, const float* grad, std::size_t n, float lr) {
  for (std::size_t i = 0; i < n; ++i) params[i] -= lr * grad[i];
}

void update_ema(float* shadow, const float* params, std::size_t n, float decay) {
  const float one_minus = 1.0f - decay;
  for (std::size_t i = 0; i < n; ++i) shadow[i] -= one_minus * (shadow[i] - params[i]);
}

void apply_mean_sgd(float* params, const float* grad_sum, std::size_t n, float lr,
                    std::size_t count) {
  const float inv = 1.0f / static_cast<float>(count);
  for (std::size_t i = 0; i < n; ++i) params[i] -= lr * (grad_sum[i] * inv);
}

}  // namespace downpour
