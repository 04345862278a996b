#include "model/init.hpp"

#include <cmath>
#include <random>

namespace downpour {
namespace {

// Box-Muller on mt19937_64 bits: std::normal_distribution's output differs
// between standard libraries, and initial values must be reproducible.
class normal_source {
 public:
  explicit normal_source(std::uint64_t seed) : rng_(seed) {}
  double next() {
    double u1 = uniform_open();
    double u2 = uniform_open();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  double uniform_open() {  // (0, 1]
    return (static_cast<double>(rng_() >> 11) + 1.0) * 0x1.0p-53;
  }
  std::mt19937_64 rng_;
};

}  // namespace

std::vector<float> initial_parameters(const model_layout& layout, std::uint64_t seed) {
  std::vector<float> params(layout.size(), 0.0f);
  normal_source normal(seed);
  for (const auto& var : layout.variables()) {
    if (var.init.kind != init_kind::truncated_normal) continue;  // zeros
    const double stddev = var.init.stddev;
    for (std::size_t i = 0; i < var.size(); ++i) {
      double x;
      do {
        x = normal.next();
      } while (std::abs(x) > 2.0);
      params[var.offset + i] = static_cast<float>(x * stddev);
    }
  }
  return params;
}

}  // namespace downpour
