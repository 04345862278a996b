// ~actor_system waits, without end, for every actor of its node. A node
// that ended its job therefore waits here first, bounded, for the actors it
// started: one that does not end in time is named in a WARN line and
// killed, so a stuck shutdown is a log line, not a process that never exits.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "reporting/log.hpp"
#include "protocol/messages.hpp"

namespace downpour {

struct named_actor {
  std::string name;
  caf::actor handle;
};

// Waits until every actor has ended or bound has passed; kills the rest.
// Returns the names of those that had to be killed.
std::vector<std::string> await_local_ends(caf::scoped_actor& self,
                                          const std::vector<named_actor>& actors,
                                          caf::timespan bound, const logger& log);

}  // namespace downpour
