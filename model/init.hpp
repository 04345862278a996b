// Parameter initialisation: each variable as its initializer says, drawn in
// declaration order from one seeded source (model/layout.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "model/layout.hpp"

namespace downpour {

// layout.size() floats, deterministic from seed on any toolchain.
std::vector<float> initial_parameters(const model_layout& layout, std::uint64_t seed);

}  // namespace downpour
