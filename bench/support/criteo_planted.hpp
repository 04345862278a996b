// A planted model of Criteo-format data (data/criteo.hpp), to draw lines
// whose best achievable log loss and AUC are known. Each categorical field
// has its own vocabulary, power law (Zipf exponent) and share of missing
// values, and its most frequent values carry planted weights; the integer
// fields are log-normal counts, some missing, whose log(1 + x) carries a
// planted coefficient: the features the reader makes of a line are exactly
// those the planted logit is linear in. A label is Bernoulli(sigmoid(logit)),
// the bias set for the chosen share of positives. Everything follows from
// the seed.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "data/criteo.hpp"

namespace downpour {

struct criteo_field {
  std::uint64_t vocabulary = 1000;  // distinct values
  double zipf = 1.1;                // power-law exponent of the values' ranks
  double missing = 0.0;             // share of lines where it is empty
  std::uint64_t informative = 100;  // the most frequent values that carry a weight
  double weight_stddev = 0.3;
};

struct criteo_spec {
  std::uint64_t seed = 1;
  double base_rate = 0.256;  // Criteo's share of positives
  double vocabulary_scale = 1.0;  // every categorical vocabulary times this (at least 1)
};

// The planted fields: 26 categoricals from tiny (3 values) to large (10^6).
std::array<criteo_field, criteo_categorical_fields> planted_categoricals(const criteo_spec& spec);

class criteo_model {
 public:
  explicit criteo_model(const criteo_spec& spec);

  // One drawn line: its text (no newline) and the planted logit.
  struct line {
    std::string text;
    double logit = 0.0;
    std::uint8_t label = 0;
  };
  // Line `index` of stream `stream` (train 0, test 1): a pure function of them.
  line draw(std::uint64_t stream, std::uint64_t index) const;
  double bias() const { return bias_; }

 private:
  double features(std::uint64_t stream, std::uint64_t index, std::string* text) const;
  double solve_bias() const;

  criteo_spec spec_;
  std::array<criteo_field, criteo_categorical_fields> fields_;
  std::array<double, criteo_integer_fields> coefficients_;
  std::vector<std::vector<float>> weights_;  // per field, by rank (informative ones)
  double bias_ = 0.0;
};

}  // namespace downpour
