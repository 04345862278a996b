// Running the job: the whole cluster in one process (--role=local), or one
// node of it (--role=ps / --role=worker) joining through the cluster config.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "reporting/log.hpp"
#include "caf/all.hpp"
#include "config/options.hpp"
#include "model/sparse_table.hpp"
#include "protocol/metered_config.hpp"
#include "runtime/node/caf_tuning.hpp"
#include "runtime/node/job.hpp"
#include "runtime/node/signals.hpp"

namespace downpour {

// The CAF configuration of one node: our message types, the network layer
// (its messages bounded by the model's size), and scheduler settings
// measured faster on small machines (overridable).
class node_config : public metered_config {
 public:
  node_config(const options& opts, const model_layout& layout);
};

// The bytes of a sparse variable's rows a message may carry (basp_guard).
std::uint64_t row_message_bytes(const model_layout& layout);

// Called with the port a node listens on once it listens (ephemeral ports).
using listening_callback = std::function<void(std::uint16_t)>;

// What the process around a node hooks in: the port once it listens, and
// the switch a stop request (a signal) goes to; none: the node ignores them.
struct node_hooks {
  listening_callback on_listening;
  stop_switch* stops = nullptr;
};

// --role=local: every ps and worker of the host lists in this process, over
// in-process messages (inproc) or one actor system per node on loopback (tcp).
// A stop ends the job with a checkpoint (summary status "stopped").
caf::expected<job_result> run_local(const options& opts, const job_model& job,
                                    const node_hooks& hooks = {});

// --role=ps: serve one shard until the chief stops the job; returns the
// shard's final global step. A stop asks the chief to stop the job; the
// node then ends with errc::interrupted, as every node of a stopped job.
caf::expected<std::int64_t> run_ps_node(const options& opts, const model_layout& layout,
                                        const node_hooks& hooks = {});

// --role=worker: task 0 is the chief (supervisor, init, final summary) and
// returns the job's result; other workers return an empty result when done.
// A stop on the chief stops the job; on another worker, that worker leaves.
caf::expected<job_result> run_worker_node(const options& opts, const job_model& job,
                                          const node_hooks& hooks = {});

// Both on an actor system made from node_config{opts, layout}, owned by the
// caller: the command line bounds its teardown (runtime/cli/node_system.hpp).
caf::expected<std::int64_t> run_ps_node(caf::actor_system& sys, const options& opts,
                                        const model_layout& layout, const node_hooks& hooks);
caf::expected<job_result> run_worker_node(caf::actor_system& sys, const options& opts,
                                          const job_model& job, const node_hooks& hooks);

// The final line (completed jobs) and summary.json in the checkpoint dir.
void report_final(const options& opts, const run_summary& summary, const logger& log);

}  // namespace downpour
