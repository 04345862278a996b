// Parameter initialisation: tf.truncated_normal_initializer(stddev=0.1) for
// weights (values beyond 2 stddev redrawn, no rescaling), zeros for biases.
#pragma once

#include <cstdint>
#include <vector>

#include "model/shape.hpp"

namespace downpour {

// Deterministic from seed.
std::vector<float> initial_parameters(const model_shape& shape, std::uint64_t seed,
                                      float stddev = 0.1f);

}  // namespace downpour
