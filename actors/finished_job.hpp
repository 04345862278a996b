// What the chief publishes instead of its stop supervisor when it is started
// again on a job that completed before (runtime/node/finished.hpp): every
// hello is answered with the last step, so a worker started again learns that
// the job is over and exits 0; it quits once every other worker has said
// hello. It trains nothing: tickets, bad batches and the rest are refused.
#pragma once

#include <cstdint>
#include <string>

#include "protocol/messages.hpp"
#include "reporting/log.hpp"

namespace downpour {

struct finished_job_config {
  std::string fingerprint;  // the cluster's: a node of another cluster is refused
  std::int64_t last_step = 0;
  std::size_t other_workers = 0;  // hellos to wait for before quitting
  std::string final_line;         // what `downpour status` is told
  logger log;
  std::string secret;  // --cluster-secret-file's contents: hellos prove it; empty: none
};

supervisor_actor spawn_finished_job(caf::actor_system& sys, finished_job_config cfg);

}  // namespace downpour
