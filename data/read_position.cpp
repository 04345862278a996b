#include "data/read_position.hpp"

#include <algorithm>

namespace downpour {

void merge_position(std::vector<worker_position>& into, std::uint32_t worker,
                    const read_position& at) {
  auto it = std::lower_bound(into.begin(), into.end(), worker,
                             [](const worker_position& p, std::uint32_t w) { return p.worker < w; });
  if (it != into.end() && it->worker == worker)
    it->at = newer(it->at, at);
  else
    into.insert(it, worker_position{worker, at});
}

}  // namespace downpour
