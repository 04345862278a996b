#include "bench/support/criteo_planted.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "model/sparse_hash.hpp"
#include "model/sparse_metrics.hpp"

namespace downpour {
namespace {

constexpr std::uint64_t kPilotStream = ~std::uint64_t{0};
constexpr std::size_t kPilotLines = 20000;
constexpr std::uint64_t kWeightSalt = 0x77656967687473ull;  // "weights"

// Criteo's integer fields: the share missing, and the log-normal counts'
// mean and spread of log(1 + x).
struct integer_field {
  double missing, mean, spread;
};
constexpr std::array<integer_field, criteo_integer_fields> kIntegers = {{
    {0.45, 1.0, 1.0}, {0.0, 2.0, 2.0}, {0.2, 1.5, 1.2}, {0.2, 1.5, 1.0},
    {0.02, 7.0, 2.5}, {0.2, 3.0, 1.5}, {0.04, 1.5, 1.3}, {0.0, 2.0, 1.0},
    {0.04, 3.5, 1.5}, {0.45, 0.5, 0.5}, {0.04, 1.0, 0.8}, {0.77, 0.5, 0.8},
    {0.2, 1.5, 1.0},
}};

// The bounded power law of planted_model (bench/support/sparse_planted.hpp):
// the rank whose CDF is u, over `count` ranks.
std::uint64_t zipf_rank(double u, std::uint64_t count, double s) {
  const double k1 = static_cast<double>(count) + 1.0;
  const double x = s == 1.0 ? std::exp(u * std::log(k1))
                            : std::pow(1.0 + u * (std::pow(k1, 1.0 - s) - 1.0), 1.0 / (1.0 - s));
  const double rank = std::floor(x) - 1.0;
  if (!(rank > 0)) return 0;
  return std::min(static_cast<std::uint64_t>(rank), count - 1);
}

// The value of rank r of field j as Criteo writes values: 8 hex digits, a
// bijection of 32-bit ranks so that two ranks are two values.
std::string token(std::size_t field, std::uint64_t rank) {
  auto x = static_cast<std::uint32_t>(rank);
  x = x * 0x9E3779B1u + static_cast<std::uint32_t>(field) * 0x632BE5ABu;
  x ^= x >> 16;
  x *= 0x85EBCA6Bu;
  x ^= x >> 13;
  char text[16];
  std::snprintf(text, sizeof text, "%08x", x);
  return text;
}

class bits {
 public:
  explicit bits(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    state_ += 0x9e3779b97f4a7c15ull;
    return mix64(state_);
  }
  double unit() { return unit_interval(next()); }

 private:
  std::uint64_t state_;
};

}  // namespace

std::array<criteo_field, criteo_categorical_fields> planted_categoricals(const criteo_spec& spec) {
  // Vocabularies after Criteo's Kaggle set (its largest capped at 10^6).
  const std::array<std::uint64_t, criteo_categorical_fields> vocab = {
      1460, 583, 1000000, 1000000, 305, 24, 12517, 633, 3, 93145, 5683, 1000000, 3194,
      27, 14992, 1000000, 10, 5652, 2172, 4, 1000000, 18, 15, 286181, 105, 142572};
  const std::array<double, criteo_categorical_fields> missing = {
      0, 0, 0.03, 0.03, 0, 0.12, 0, 0, 0, 0, 0, 0.03, 0, 0, 0, 0.03, 0, 0, 0.44, 0.44, 0.03, 0.76,
      0, 0.03, 0.44, 0.44};
  std::array<criteo_field, criteo_categorical_fields> out{};
  for (std::size_t j = 0; j < out.size(); ++j) {
    auto& f = out[j];
    f.vocabulary = std::max<std::uint64_t>(
        1, static_cast<std::uint64_t>(static_cast<double>(vocab[j]) * spec.vocabulary_scale));
    f.zipf = 1.05 + 0.01 * static_cast<double>(j % 7) * 3;
    f.missing = missing[j];
    f.informative = std::min<std::uint64_t>(f.vocabulary, 2000);
    f.weight_stddev = 0.25 + 0.05 * static_cast<double>(j % 4);
  }
  return out;
}

criteo_model::criteo_model(const criteo_spec& spec)
    : spec_(spec), fields_(planted_categoricals(spec)) {
  const std::uint64_t salt = mix64(spec.seed, kWeightSalt);
  for (std::size_t i = 0; i < coefficients_.size(); ++i)
    coefficients_[i] = 0.2 * standard_normal(mix64(salt, 1000 + i));
  for (std::size_t j = 0; j < fields_.size(); ++j) {
    std::vector<float> w(fields_[j].informative);
    for (std::uint64_t r = 0; r < w.size(); ++r)
      w[r] = static_cast<float>(fields_[j].weight_stddev *
                                standard_normal(mix64(mix64(salt, j), r)));
    weights_.push_back(std::move(w));
  }
  bias_ = solve_bias();
}

// The line's features (into text when given) and the sum of their weights.
double criteo_model::features(std::uint64_t stream, std::uint64_t index, std::string* text) const {
  bits draw(mix64(mix64(spec_.seed, stream), index));
  double z = 0.0;
  for (std::size_t i = 0; i < criteo_integer_fields; ++i) {
    const auto& f = kIntegers[i];
    if (text) *text += '\t';
    if (draw.unit() < f.missing) continue;
    auto x = static_cast<std::int64_t>(std::floor(std::exp(f.mean + f.spread * standard_normal(draw.next())))) - 1;
    if (i == 1 && draw.unit() < 0.05) x = -1 - static_cast<std::int64_t>(draw.next() % 3);
    if (text) *text += std::to_string(x);
    z += coefficients_[i] * (x > 0 ? std::log1p(static_cast<double>(x)) : 0.0);
  }
  for (std::size_t j = 0; j < fields_.size(); ++j) {
    const auto& f = fields_[j];
    if (text) *text += '\t';
    if (draw.unit() < f.missing) continue;
    const std::uint64_t r = zipf_rank(draw.unit(), f.vocabulary, f.zipf);
    if (text) *text += token(j, r);
    if (r < weights_[j].size()) z += weights_[j][r];
  }
  return z;
}

criteo_model::line criteo_model::draw(std::uint64_t stream, std::uint64_t index) const {
  line out;
  std::string fields;
  out.logit = bias_ + features(stream, index, &fields);
  const double u = unit_interval(mix64(mix64(spec_.seed, stream ^ 0x6c6162656c), index));
  out.label = u <= sigmoid(out.logit) ? 1 : 0;
  out.text = (out.label ? "1" : "0") + fields;
  return out;
}

// The bias whose mean sigmoid over a pilot sample is the base rate.
double criteo_model::solve_bias() const {
  std::vector<double> z(kPilotLines);
  for (std::size_t i = 0; i < z.size(); ++i) z[i] = features(kPilotStream, i, nullptr);
  double lo = -60.0, hi = 60.0;
  for (int it = 0; it < 100; ++it) {
    const double mid = 0.5 * (lo + hi);
    double mean = 0.0;
    for (double x : z) mean += sigmoid(mid + x);
    (mean / static_cast<double>(z.size()) < spec_.base_rate ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace downpour
