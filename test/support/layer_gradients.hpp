// Gradient checks for the layers (model/layers/) in double: central
// differences of a scalar function of the layer's output, compared entry by
// entry with the gradient its backward gives.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "model/layers/tensor.hpp"

namespace downpour::testing {

// n uniform values in [lo, hi), fixed by seed.
inline std::vector<double> uniform_values(std::size_t n, std::uint64_t seed, double lo = -1.0,
                                          double hi = 1.0) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

// n values with magnitudes in [margin, 1] and random signs: a ReLU's input
// whose finite differences never cross the kink at 0.
inline std::vector<double> away_from_zero(std::size_t n, std::uint64_t seed, double margin) {
  std::vector<double> v = uniform_values(n, seed, margin, 1.0);
  std::mt19937_64 rng(seed ^ 0x5a5a5a5aull);
  for (auto& x : v)
    if (rng() & 1) x = -x;
  return v;
}

// sum(t .* weights): a scalar of a layer's output whose gradient at the
// output is weights.
inline double weighted_sum(layers::const_tensor<double> t, const std::vector<double>& weights) {
  double s = 0.0;
  for (std::size_t i = 0; i < t.size(); ++i) s += t.data[i] * weights[i];
  return s;
}

inline std::vector<double> values_of(layers::const_tensor<double> t) {
  return std::vector<double>(t.data, t.data + t.size());
}

// The central differences of loss() in every entry of x (each restored).
template <class Loss>
std::vector<double> central_differences(Loss&& loss, std::vector<double>& x, double h = 1e-5) {
  std::vector<double> numeric(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double kept = x[i];
    x[i] = kept + h;
    const double up = loss();
    x[i] = kept - h;
    const double down = loss();
    x[i] = kept;
    numeric[i] = (up - down) / (2 * h);
  }
  return numeric;
}

// The worst entry's |analytic - numeric| relative to its numeric value, or to
// 1e-3 of the largest numeric value for an entry much smaller than that
// (where a difference of rounding size is no error); NaN when any analytic
// entry is NaN (a backward that left an entry unwritten) or the sizes differ.
inline double worst_relative_error(const std::vector<double>& analytic,
                                   const std::vector<double>& numeric) {
  if (analytic.size() != numeric.size()) return std::numeric_limits<double>::quiet_NaN();
  double largest = 0.0;
  for (double n : numeric) largest = std::max(largest, std::abs(n));
  double worst = 0.0;
  for (std::size_t i = 0; i < numeric.size(); ++i) {
    if (std::isnan(analytic[i])) return analytic[i];
    const double scale = std::max({std::abs(numeric[i]), 1e-3 * largest, 1e-12});
    worst = std::max(worst, std::abs(analytic[i] - numeric[i]) / scale);
  }
  return worst;
}

// A gradient buffer of n entries a backward must overwrite: NaN until then.
inline std::vector<double> unwritten(std::size_t n) {
  return std::vector<double>(n, std::numeric_limits<double>::quiet_NaN());
}

}  // namespace downpour::testing
