#include "model/schedule.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

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

namespace {

// NaN and inf are the floats whose exponent bits are all ones.
constexpr std::uint32_t exponent_mask = 0x7f800000u;

std::uint32_t exponent_bits(float x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits & exponent_mask;
}

}  // namespace

bool all_finite(const float* v, std::size_t n) {
  // A max over the exponents, not an early exit: the common case (all
  // finite) reads every float anyway, and this form runs at memory speed.
  std::uint32_t worst = 0;
  for (std::size_t i = 0; i < n; ++i) worst = std::max(worst, exponent_bits(v[i]));
  return worst != exponent_mask;
}

bool checked_sgd_to(float* out, const float* params, const float* grad, std::size_t n, float lr) {
  std::uint32_t worst = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const float g = grad[i];
    worst = std::max(worst, exponent_bits(g));
    out[i] = params[i] - lr * g;
  }
  return worst != exponent_mask;
}

void sgd_to(float* out, const float* params, const float* grad, std::size_t n, float lr) {
  for (std::size_t i = 0; i < n; ++i) out[i] = params[i] - lr * grad[i];
}

void mean_sgd_to(float* out, const float* params, const float* grad_sum, std::size_t n, float lr,
                 std::size_t count) {
  const float inv = 1.0f / static_cast<float>(count);
  for (std::size_t i = 0; i < n; ++i) out[i] = params[i] - lr * (grad_sum[i] * inv);
}

}  // namespace downpour
