// A ps serves its shard only while a chief leads the job, so that no ps is
// left running forever, holding its port, after the chief is gone.
#pragma once

#include <functional>

#include "protocol/messages.hpp"
#include "config/options.hpp"

namespace downpour {

// Waits until the shard stops and returns its exit reason (none when the
// chief stopped it at the end of the job). It gives up, stops the shard and
// fails naming the chief when no chief has initialised the shard within
// --connect-timeout of the call, or when the chief it served is lost (killed,
// or hung past --node-timeout) and none is back within --connect-timeout.
// `on_chief_back`, when given, runs each time the chief is reached again
// after it was lost (a hung ps finds out there what became of its shard);
// its failure is logged, and the ps serves on.
using chief_back_fn = std::function<caf::error(const supervisor_actor&)>;
caf::error serve_while_led(caf::actor_system& sys, const options& opts, const shard_actor& shard,
                           chief_back_fn on_chief_back = {});

}  // namespace downpour
