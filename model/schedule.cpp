#include "model/schedule.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

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

}  // namespace downpour
