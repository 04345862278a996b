#include "model/row_update.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace downpour {
namespace {

// lr by value: read through this, it could alias w, and the loop would not
// vectorize (a dense variable is one long row).
void sgd_row(float* w, const float* g, std::size_t dim, float lr) {
  for (std::size_t j = 0; j < dim; ++j) w[j] -= lr * g[j];
}

void momentum_row(float* w, float* a, const float* g, std::size_t dim, float lr, float m) {
  for (std::size_t j = 0; j < dim; ++j) {
    a[j] = m * a[j] + g[j];
    w[j] -= lr * a[j];
  }
}

void adagrad_row(float* w, float* a, const float* g, std::size_t dim, float lr) {
  for (std::size_t j = 0; j < dim; ++j) {
    a[j] += g[j] * g[j];
    w[j] -= lr * g[j] / std::sqrt(a[j]);
  }
}

void adam_row(float* w, float* m, float* v, const float* g, std::size_t dim, float lr_t,
              const update_spec& s) {
  for (std::size_t j = 0; j < dim; ++j) {
    m[j] = s.beta1 * m[j] + (1.0f - s.beta1) * g[j];
    v[j] = s.beta2 * v[j] + (1.0f - s.beta2) * g[j] * g[j];
    w[j] -= lr_t * m[j] / (std::sqrt(v[j]) + s.epsilon);
  }
}

// n^-p: sqrt for TF's default lr_power -0.5, as its kernel special-cases it.
float accum_power(float n, float lr_power) {
  return lr_power == -0.5f ? std::sqrt(n) : std::pow(n, -lr_power);
}

void ftrl_row(float* w, float* n, float* z, const float* g, std::size_t dim, float lr,
              const update_spec& s) {
  for (std::size_t j = 0; j < dim; ++j) {
    const float n_new = n[j] + g[j] * g[j];
    const float root_new = accum_power(n_new, s.lr_power);
    z[j] += g[j] - (root_new - accum_power(n[j], s.lr_power)) / lr * w[j];
    n[j] = n_new;
    const float quadratic = root_new / lr + 2.0f * s.ftrl_l2;
    const float shrunk = (z[j] > 0.0f ? s.ftrl_l1 : -s.ftrl_l1) - z[j];
    w[j] = std::abs(z[j]) > s.ftrl_l1 ? shrunk / quadratic : 0.0f;
  }
}

}  // namespace

row_update::row_update(const update_spec& spec, const regularizer& reg, float lr,
                       std::int64_t step)
    : spec_(spec), reg_(reg), lr_(spec.learning_rate > 0.0f ? spec.learning_rate : lr) {
  if (spec.rule == update_rule::adam) {
    // In double: beta^t of a late step is far below float's resolution of 1 - x.
    const double t = static_cast<double>(step) + 1.0;
    const double b1t = std::pow(static_cast<double>(spec.beta1), t);
    const double b2t = std::pow(static_cast<double>(spec.beta2), t);
    adam_lr_ = static_cast<float>(lr_ * std::sqrt(1.0 - b2t) / (1.0 - b1t));
  }
}

void row_update::regularized(const float* w, const float* g, float* out, std::size_t dim) const {
  for (std::size_t j = 0; j < dim; ++j) {
    const float sign = w[j] > 0.0f ? 1.0f : (w[j] < 0.0f ? -1.0f : 0.0f);
    out[j] = g[j] + reg_.l1 * sign + reg_.l2 * w[j];
  }
}

void row_update::apply(float* w, float* slots, const float* g, std::size_t dim) const {
  thread_local std::vector<float> reg_grad;
  if (reg_.l1 > 0.0f || reg_.l2 > 0.0f) {
    reg_grad.resize(dim);
    regularized(w, g, reg_grad.data(), dim);
    g = reg_grad.data();
  }
  switch (spec_.rule) {
    case update_rule::sgd: return sgd_row(w, g, dim, lr_);
    case update_rule::momentum: return momentum_row(w, slots, g, dim, lr_, spec_.momentum);
    case update_rule::adagrad: return adagrad_row(w, slots, g, dim, lr_);
    case update_rule::adam: return adam_row(w, slots, slots + dim, g, dim, adam_lr_, spec_);
    case update_rule::ftrl: return ftrl_row(w, slots, slots + dim, g, dim, lr_, spec_);
  }
}

void fill_initial_slots(const update_spec& spec, float* slots, std::size_t dim) {
  const std::size_t n = slots_of(spec.rule) * dim;
  std::fill(slots, slots + n, 0.0f);
  if (spec.rule == update_rule::adagrad || spec.rule == update_rule::ftrl)
    std::fill(slots, slots + dim, spec.initial_accumulator);
}

}  // namespace downpour
