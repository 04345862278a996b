// What the stop supervisor is spawned with (actors/stop_supervisor.hpp says
// what it does).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "actors/update_tally.hpp"
#include "reporting/log.hpp"
#include "protocol/messages.hpp"
#include "reporting/progress.hpp"
#include "reporting/status.hpp"
#include "config/options.hpp"

namespace downpour {

struct supervisor_config {
  std::string fingerprint;
  std::string secret;  // --cluster-secret-file's contents; empty: none
  std::int64_t start_step = 0;
  std::int64_t last_step = 0;
  std::vector<shard_actor> shards;
  progress_config progress;
  train_mode mode = train_mode::async;
  coordinator_actor coordinator;  // handed to joining nodes
  saver_actor saver;              // writes the final step's checkpoint; status: the newest
  std::size_t workers = 0;        // trainers in all: worker hosts x --trainers
  std::size_t trainers = 1;       // per worker node: a node's hello speaks for them all
  std::size_t listed_tasks = 0;   // worker nodes in --worker-hosts; joiners take the next indices
  std::string joins_refused;      // why --join is refused (a streamed-input job); empty: taken
  logger log;                     // the chief
  std::map<std::string, std::string> config_sources;  // for status: options.sources
  std::int64_t max_bad_batches = 0;  // non-finite batches skipped before the job diverges
  // The answer to a status request, from the facts (reporting/status_json.hpp);
  // without one, status requests are refused.
  std::function<std::string(const status_facts&)> render_status;
  // Updates applied and lost, failover pauses: filled here, read by the chief.
  std::shared_ptr<update_tally> tally = std::make_shared<update_tally>();
};

}  // namespace downpour
