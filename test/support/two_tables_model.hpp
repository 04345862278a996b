// A model with two row variables of different widths and rules, for tests of
// the runtime's key space: a binary classifier on sparse (libsvm) examples
// whose logit is bias + sum over features f of value * (wide[f % kWide] +
// the kEmbCols floats of emb[f % kEmb]), with the sigmoid cross-entropy.
// "wide" (keys [0, kWide)) is updated by FTRL, "emb" (keys [kWide, kWide +
// kEmb)) by AdaGrad, the dense bias by the job's SGD.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "data/libsvm.hpp"
#include "model/model.hpp"

namespace downpour::testing {

inline constexpr std::uint64_t kWide = 40;
inline constexpr std::uint64_t kEmb = 24;
inline constexpr std::size_t kEmbCols = 3;

class two_tables_workspace final : public model_workspace {
 public:
  explicit two_tables_workspace(std::size_t batch_size) : scores_(2 * batch_size) {}

  const std::vector<std::uint64_t>& touched_rows(const batch& b) override {
    keys_.clear();
    for (const std::uint64_t f : b.keys) {
      keys_.push_back(f % kWide);
      keys_.push_back(kWide + f % kEmb);
    }
    std::sort(keys_.begin(), keys_.end());
    keys_.erase(std::unique(keys_.begin(), keys_.end()), keys_.end());
    starts_.assign(keys_.size(), 0);
    std::size_t at = 0;
    for (std::size_t i = 0; i < keys_.size(); ++i) {
      starts_[i] = at;
      at += keys_[i] < kWide ? 1 : kEmbCols;
    }
    return keys_;
  }

  float loss_and_gradient(const float* params, const float* rows, const batch& b, float* grad,
                          float* row_grad) override {
    touched_rows(b);
    const std::size_t values = keys_.empty() ? 0 : starts_.back() + width(keys_.back());
    std::fill(row_grad, row_grad + values, 0.0f);
    grad[0] = 0.0f;
    double loss = 0.0;
    const float n = static_cast<float>(b.size);
    for (std::size_t i = 0; i < b.size; ++i) {
      const float s = logit(params, rows, b, i);
      const float y = static_cast<float>(b.y[i]);
      loss += std::log1p(std::exp(-std::fabs(s))) + std::max(s, 0.0f) - y * s;
      const float d = (1.0f / (1.0f + std::exp(-s)) - y) / n;
      grad[0] += d;
      for (std::uint64_t j = b.offsets[i]; j < b.offsets[i + 1]; ++j)
        for (const std::uint64_t key : keys_of(b.keys[j])) {
          float* g = row_grad + start_of(key);
          for (std::size_t c = 0; c < width(key); ++c) g[c] += d * b.values[j];
        }
    }
    return static_cast<float>(loss / b.size);
  }

  const float* scores(const float* params, const float* rows, const batch& b) override {
    touched_rows(b);
    for (std::size_t i = 0; i < b.size; ++i) {
      scores_[2 * i] = 0.0f;
      scores_[2 * i + 1] = logit(params, rows, b, i);
    }
    return scores_.data();
  }

  // Without rows the model has nothing to score.
  float loss_and_gradient(const float*, const batch&, float*) override { throw no_rows(); }
  float loss(const float*, const batch&) override { throw no_rows(); }
  const float* scores(const float*, const batch&) override { throw no_rows(); }

 private:
  static std::logic_error no_rows() { return std::logic_error("two_tables: rows are needed"); }
  static std::size_t width(std::uint64_t key) { return key < kWide ? 1 : kEmbCols; }
  static std::vector<std::uint64_t> keys_of(std::uint64_t f) { return {f % kWide, kWide + f % kEmb}; }

  std::size_t start_of(std::uint64_t key) const {
    const auto it = std::lower_bound(keys_.begin(), keys_.end(), key);
    return starts_[static_cast<std::size_t>(it - keys_.begin())];
  }

  float logit(const float* params, const float* rows, const batch& b, std::size_t i) const {
    float s = params[0];
    for (std::uint64_t j = b.offsets[i]; j < b.offsets[i + 1]; ++j)
      for (const std::uint64_t key : keys_of(b.keys[j])) {
        const float* w = rows + start_of(key);
        for (std::size_t c = 0; c < width(key); ++c) s += b.values[j] * w[c];
      }
    return s;
  }

  std::vector<std::uint64_t> keys_;
  std::vector<std::size_t> starts_;  // each key's first value
  std::vector<float> scores_;
};

class two_tables_model final : public model {
 public:
  model_layout layout() const override {
    return model_layout(
        "two_tables", "",
        {{.name = "bias", .rows = 1, .cols = 1},
         {.name = "wide", .rows = kWide, .cols = 1, .store = storage::rows,
          .update = {.rule = update_rule::ftrl, .ftrl_l1 = 0.001f}},
         {.name = "emb", .rows = kEmb, .cols = kEmbCols,
          .init = {init_kind::truncated_normal, 0.1f}, .store = storage::rows,
          .update = {.rule = update_rule::adagrad}, .reg = {.l2 = 0.01f}}});
  }
  std::size_t classes() const override { return 2; }
  std::unique_ptr<model_workspace> workspace(std::size_t batch_size) const override {
    return std::make_unique<two_tables_workspace>(batch_size);
  }
};

// n examples of a few features each, labelled by a fixed rule of them.
inline sparse_examples two_tables_examples(std::size_t n, std::uint64_t seed) {
  sparse_examples set;
  std::uint64_t x = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t last = 0;
    int score = 0;
    for (int k = 0; k < 4; ++k) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      last += 1 + (x >> 33) % 50;  // ascending feature indices
      set.keys.push_back(last);
      set.values.push_back(k % 2 == 0 ? 1.0f : 0.5f);
      score += (last % 3 == 0) ? 1 : -1;
    }
    set.close_example(static_cast<std::uint8_t>(score > -2 ? 1 : 0));
  }
  return set;
}

}  // namespace downpour::testing
