// A planted sparse logistic model, to draw libsvm data whose best achievable
// log loss is known. Feature ranks follow a bounded power law (Zipf with
// exponent s over K ranks: a few features in most examples, most of the K
// seen rarely), each rank a fixed pseudo-random feature index in [0, K).
// The M most frequent ranks carry planted weights w ~ N(0, stddev^2), the
// rest none; the bias gives the chosen share of positive labels; a label is
// Bernoulli(sigmoid(b + sum of the example's weights)). Everything follows
// from the seed.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "data/libsvm.hpp"

namespace downpour {

struct planted_spec {
  std::uint64_t seed = 1;
  std::uint64_t vocabulary = std::uint64_t{1} << 24;  // K
  std::uint64_t informative = std::uint64_t{1} << 14;  // M
  double zipf = 1.1;                                   // s
  std::size_t draws = 20;  // feature draws per example; a repeated one is dropped
  double weight_stddev = 0.3;
  double base_rate = 0.25;  // the expected share of labels 1
};

class planted_model {
 public:
  // Throws std::invalid_argument naming the field that is out of range.
  explicit planted_model(const planted_spec& spec);

  const planted_spec& spec() const { return spec_; }
  double bias() const { return bias_; }
  // The planted logit of example i of set (its features' values count).
  double logit(const sparse_examples& set, std::size_t i) const;

  // The weight of feature rank r (0 for r >= M).
  double rank_weight(std::uint64_t rank) const;
  // The feature index of rank r: a bijection of [0, K).
  std::uint64_t feature_of(std::uint64_t rank) const;
  // A rank drawn by the power law from 64 random bits.
  std::uint64_t draw_rank(std::uint64_t bits) const;

 private:
  double solve_bias() const;

  planted_spec spec_;
  unsigned index_bits_;  // the bits of K - 1
  // feature_of's rounds: an odd multiplier and an addend each
  std::array<std::pair<std::uint64_t, std::uint64_t>, 3> rounds_;
  double exponent_term_;   // (K + 1)^(1 - s) - 1, the power law's normaliser
  std::vector<float> weights_;  // by rank, M of them
  std::vector<std::pair<std::uint64_t, float>> by_feature_;  // (feature, weight), ascending
  double bias_ = 0.0;
};

// Examples drawn from a planted model, stream by stream: streams of one model
// are independent (train and test are two streams, so the test set does not
// change with the number of training examples).
class planted_sampler {
 public:
  planted_sampler(const planted_model& model, std::uint64_t stream);
  // The next n examples (values 1, indices ascending).
  sparse_examples next(std::size_t n);

 private:
  friend class planted_model;  // fits its bias on draw_features
  std::uint64_t next_bits();
  // Draws one example's ranks into ranks_ (ascending, unique); returns the
  // sum of their weights.
  double draw_features();

  const planted_model& model_;
  std::uint64_t state_;
  std::vector<std::uint64_t> ranks_;
};

}  // namespace downpour
