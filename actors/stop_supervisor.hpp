// The stop-at-step supervisor on the chief. It hands out one step ticket per
// push, exactly last_step - start_step of them, so the final global step is
// exact with no asynchronous overshoot; once every push is applied on every
// shard it answers end requests and the job shuts down.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "actors/messages.hpp"
#include "runtime/progress.hpp"

namespace downpour {

struct supervisor_config {
  std::string fingerprint;
  std::int64_t start_step = 0;
  std::int64_t last_step = 0;
  std::vector<shard_actor> shards;
  progress_config progress;
};

supervisor_actor spawn_stop_supervisor(caf::actor_system& sys, supervisor_config cfg);

// Pure rule: the ticket for the next push, or -1 once last_step tickets are out.
std::int64_t next_ticket(std::int64_t granted, std::int64_t last_step);

}  // namespace downpour
