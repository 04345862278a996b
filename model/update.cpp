#include "model/update.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace downpour {
namespace {

// NaN and inf are the floats whose exponent bits are all ones.
constexpr std::uint32_t exponent_mask = 0x7f800000u;

std::uint32_t exponent_bits(float x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits & exponent_mask;
}

// The one SGD loop: out[i] = params[i] - lr * step(i). Inlined into each
// kernel, so every one vectorizes on its own.
template <class Step>
void descend(float* out, const float* params, std::size_t n, float lr, Step step) {
  for (std::size_t i = 0; i < n; ++i) out[i] = params[i] - lr * step(i);
}

}  // namespace

void sgd_into(float* out, const float* params, const float* grad, std::size_t n, float lr) {
  descend(out, params, n, lr, [grad](std::size_t i) { return grad[i]; });
}

bool checked_sgd_into(float* out, const float* params, const float* grad, std::size_t n,
                      float lr) {
  // A max over the exponents, not an early exit: the common case (all
  // finite) reads every float anyway, and this form runs at memory speed.
  std::uint32_t worst = 0;
  descend(out, params, n, lr, [&](std::size_t i) {
    const float g = grad[i];
    worst = std::max(worst, exponent_bits(g));
    return g;
  });
  return worst != exponent_mask;
}

void mean_sgd_into(float* out, const float* params, const float* grad_sum, std::size_t n,
                   float lr, std::size_t count) {
  const float inv = 1.0f / static_cast<float>(count);
  descend(out, params, n, lr, [=](std::size_t i) { return grad_sum[i] * inv; });
}

void update_ema(float* shadow, const float* params, std::size_t n, float decay) {
  const float one_minus = 1.0f - decay;
  for (std::size_t i = 0; i < n; ++i) shadow[i] -= one_minus * (shadow[i] - params[i]);
}

bool all_finite(const float* v, std::size_t n) {
  std::uint32_t worst = 0;
  for (std::size_t i = 0; i < n; ++i) worst = std::max(worst, exponent_bits(v[i]));
  return worst != exponent_mask;
}

}  // namespace downpour
