// The sync coordinator on the chief. It watches the workers (each one joins
// and is monitored): in sync mode a dead worker lowers the number of fresh
// gradients a round needs, so the job never hangs on it (TensorFlow issue
// 5022), and a worker that rejoins restores the count. In ssp mode it admits
// each worker's next step only within the staleness bound.
#pragma once

#include <cstdint>
#include <vector>

#include "reporting/log.hpp"
#include "protocol/messages.hpp"
#include "config/options.hpp"

namespace downpour {

struct coordinator_config {
  train_mode mode = train_mode::async;
  std::size_t workers = 1;                // the worker host list's size
  std::size_t replicas_to_aggregate = 1;  // resolved: never 0
  std::int64_t staleness = 0;
  std::vector<shard_actor> shards;
  logger log;  // the chief
};

coordinator_actor spawn_sync_coordinator(caf::actor_system& sys, coordinator_config cfg);

}  // namespace downpour
