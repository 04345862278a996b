// The stop-at-step supervisor on the chief. In async and ssp modes it hands
// out one step ticket per push, exactly last_step - start_step of them, so the
// final global step is exact with no asynchronous overshoot; a worker that
// dies holding a ticket gives it back. In sync mode the shards stop
// aggregating at last_step by themselves. Once every shard stands at
// last_step it answers end requests and the job shuts down.
// Told to stop (a signal), it hands out no more tickets, waits until every
// push is applied and has the checkpoint of that step written before it
// answers; a non-finite batch beyond --max-bad-batches fails the job.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "actors/log.hpp"
#include "actors/messages.hpp"
#include "actors/progress.hpp"
#include "config/options.hpp"

namespace downpour {

struct supervisor_config {
  std::string fingerprint;
  std::int64_t start_step = 0;
  std::int64_t last_step = 0;
  std::vector<shard_actor> shards;
  progress_config progress;
  train_mode mode = train_mode::async;
  coordinator_actor coordinator;  // handed to joining nodes
  saver_actor saver;              // for status: the newest checkpoint
  std::size_t workers = 0;        // the worker host list's size
  logger log;                     // the chief
  std::map<std::string, std::string> config_sources;  // for status: options.sources
  std::int64_t max_bad_batches = 0;  // non-finite batches skipped before the job diverges
};

supervisor_actor spawn_stop_supervisor(caf::actor_system& sys, supervisor_config cfg);

// Pure rule: the ticket for the next push, or -1 once last_step tickets are out.
std::int64_t next_ticket(std::int64_t granted, std::int64_t last_step);

}  // namespace downpour
