// The scheduler and network-layer settings every node's actor system runs
// with, apart from the node's identity (application identifiers, TLS, the
// BASP guard): one place, so bench_message measures what the nodes run
// (docs/performance.md, "CAF 0.17's knobs").
#pragma once

#include <cstddef>

#include "caf/actor_system_config.hpp"
#include "config/options.hpp"

namespace downpour {

// --scheduler-threads 0: min(hardware threads, 4), at least 2, and at least
// one more than the workers the node runs.
std::size_t default_scheduler_threads(const options& opts, std::size_t hardware);

// Scheduler policy and threads, deserialization in the middleman's thread,
// heartbeats and the connection timeout, CAF's console log off.
void tune_caf(caf::actor_system_config& cfg, const options& opts);

}  // namespace downpour
