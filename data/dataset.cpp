#include "data/dataset.hpp"

#include <functional>
#include <numeric>

namespace downpour {

std::size_t data_shape::features() const {
  return std::accumulate(dims.begin(), dims.end(), std::size_t{1}, std::multiplies<>());
}

}  // namespace downpour
