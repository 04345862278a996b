// An actor system's config that carries the node's meters
// (reporting/meters.hpp), so that an actor finds them through its own system
// and the node's /metrics endpoint through the node: no counter is passed
// around by hand, and no process-wide registry exists.
#pragma once

#include <memory>

#include "caf/actor_system.hpp"
#include "caf/actor_system_config.hpp"
#include "reporting/meters.hpp"

namespace downpour {

class metered_config : public caf::actor_system_config {
 public:
  std::shared_ptr<node_meters> meters = std::make_shared<node_meters>();
};

// The node's meters; null in an actor system of another config (a test's).
inline node_meters* meters_of(caf::actor_system& sys) {
  const auto* c = dynamic_cast<const metered_config*>(&sys.config());
  return c ? c->meters.get() : nullptr;
}

}  // namespace downpour
