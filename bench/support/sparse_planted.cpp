#include "bench/support/sparse_planted.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "model/sparse_hash.hpp"
#include "model/sparse_metrics.hpp"

namespace downpour {
namespace {

constexpr std::uint64_t kMaxVocabulary = std::uint64_t{1} << 62;
constexpr std::uint64_t kMaxInformative = std::uint64_t{1} << 26;
constexpr std::size_t kMaxDraws = 100000;
// The examples the bias is fitted on, drawn from a stream of their own.
constexpr std::size_t kPilotExamples = 20000;
constexpr std::uint64_t kPilotStream = ~std::uint64_t{0};
constexpr std::uint64_t kWeightSalt = 0x77656967687473ull;  // "weights"

// A double as a user typed it: 1.1, not 1.100000.
std::string number(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", x);
  return text;
}

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("planted model: " + what);
}

void validate(const planted_spec& s) {
  require(s.vocabulary >= 1 && s.vocabulary <= kMaxVocabulary,
          "vocabulary " + std::to_string(s.vocabulary) + " (expected 1 to 2^62)");
  require(s.informative <= std::min(s.vocabulary, kMaxInformative),
          "informative " + std::to_string(s.informative) +
              " (expected at most the vocabulary and at most 2^26)");
  require(std::isfinite(s.zipf) && s.zipf > 0 && s.zipf <= 10,
          "zipf exponent " + number(s.zipf) + " (expected above 0, at most 10)");
  require(s.draws >= 1 && s.draws <= kMaxDraws,
          "draws " + std::to_string(s.draws) + " (expected 1 to 100000)");
  require(std::isfinite(s.weight_stddev) && s.weight_stddev >= 0,
          "weight stddev " + number(s.weight_stddev) + " (expected a number >= 0)");
  require(s.base_rate > 0 && s.base_rate < 1,
          "base rate " + number(s.base_rate) + " (expected between 0 and 1)");
}

unsigned bits_for(std::uint64_t count) {
  unsigned bits = 0;
  while (bits < 64 && (std::uint64_t{1} << bits) < count) ++bits;
  return bits;
}

}  // namespace

planted_model::planted_model(const planted_spec& spec)
    : spec_(spec), index_bits_(0), exponent_term_(0) {
  validate(spec);
  index_bits_ = bits_for(spec.vocabulary);
  for (std::uint64_t i = 0; i < rounds_.size(); ++i)
    rounds_[i] = {mix64(spec.seed, i) | 1, mix64(spec.seed, i + rounds_.size())};
  const double k1 = static_cast<double>(spec.vocabulary) + 1.0;
  exponent_term_ = spec.zipf == 1.0 ? std::log(k1) : std::pow(k1, 1.0 - spec.zipf) - 1.0;
  weights_.resize(spec.informative);
  by_feature_.resize(spec.informative);
  for (std::uint64_t r = 0; r < spec.informative; ++r) {
    weights_[r] = static_cast<float>(spec.weight_stddev *
                                     standard_normal(mix64(mix64(spec.seed, kWeightSalt), r)));
    by_feature_[r] = {feature_of(r), weights_[r]};
  }
  std::sort(by_feature_.begin(), by_feature_.end());
  bias_ = solve_bias();
}

double planted_model::rank_weight(std::uint64_t rank) const {
  return rank < weights_.size() ? weights_[rank] : 0.0;
}

std::uint64_t planted_model::feature_of(std::uint64_t rank) const {
  // Rounds of multiply-add and xor-shift, each a bijection of index_bits_-bit
  // values; cycle walking (repeat until below K) makes it one of [0, K).
  const std::uint64_t mask = (std::uint64_t{1} << index_bits_) - 1;
  const unsigned shift = index_bits_ / 2 + 1;
  std::uint64_t x = rank;
  do {
    for (const auto& [multiplier, addend] : rounds_) {
      x = (x * multiplier + addend) & mask;
      x ^= x >> shift;
    }
  } while (x >= spec_.vocabulary);
  return x;
}

std::uint64_t planted_model::draw_rank(std::uint64_t bits) const {
  // Inverts the CDF of the continuous power law on [1, K + 1); its floor
  // minus one is the rank, P(r) proportional to the integral of x^-s over [r+1, r+2).
  const double u = unit_interval(bits);
  const double x = spec_.zipf == 1.0
                       ? std::exp(u * exponent_term_)
                       : std::pow(1.0 + u * exponent_term_, 1.0 / (1.0 - spec_.zipf));
  const double rank = std::floor(x) - 1.0;
  if (!(rank > 0)) return 0;
  return std::min(static_cast<std::uint64_t>(rank), spec_.vocabulary - 1);
}

double planted_model::logit(const sparse_examples& set, std::size_t i) const {
  double z = bias_;
  for (std::uint64_t j = set.offsets[i]; j < set.offsets[i + 1]; ++j) {
    const auto it = std::lower_bound(
        by_feature_.begin(), by_feature_.end(), set.keys[j],
        [](const std::pair<std::uint64_t, float>& p, std::uint64_t key) { return p.first < key; });
    if (it != by_feature_.end() && it->first == set.keys[j]) z += set.values[j] * it->second;
  }
  return z;
}

// The bias whose mean sigmoid over a pilot sample is the base rate: the
// mean is increasing in the bias, so bisection finds it.
double planted_model::solve_bias() const {
  planted_sampler pilot(*this, kPilotStream);
  std::vector<double> z(kPilotExamples);
  for (double& x : z) x = pilot.draw_features();
  double lo = -60.0;
  double hi = 60.0;
  for (int i = 0; i < 100; ++i) {
    const double mid = 0.5 * (lo + hi);
    double mean = 0.0;
    for (double x : z) mean += sigmoid(mid + x);
    (mean / static_cast<double>(z.size()) < spec_.base_rate ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

planted_sampler::planted_sampler(const planted_model& model, std::uint64_t stream)
    : model_(model), state_(mix64(model.spec().seed, stream)) {}

std::uint64_t planted_sampler::next_bits() {
  state_ += 0x9e3779b97f4a7c15ull;  // SplitMix64
  return mix64(state_);
}

double planted_sampler::draw_features() {
  ranks_.clear();
  for (std::size_t d = 0; d < model_.spec().draws; ++d)
    ranks_.push_back(model_.draw_rank(next_bits()));
  std::sort(ranks_.begin(), ranks_.end());
  ranks_.erase(std::unique(ranks_.begin(), ranks_.end()), ranks_.end());
  double z = 0.0;
  for (std::uint64_t r : ranks_) z += model_.rank_weight(r);
  return z;
}

sparse_examples planted_sampler::next(std::size_t n) {
  sparse_examples out;
  out.offsets.reserve(n + 1);
  out.labels.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double z = model_.bias() + draw_features();
    const std::size_t first = out.keys.size();
    for (std::uint64_t r : ranks_) out.keys.push_back(model_.feature_of(r));
    std::sort(out.keys.begin() + static_cast<std::ptrdiff_t>(first), out.keys.end());
    out.values.resize(out.keys.size(), 1.0f);
    out.close_example(unit_interval(next_bits()) <= sigmoid(z) ? 1 : 0);
  }
  return out;
}

}  // namespace downpour
