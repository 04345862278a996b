// --join: a worker node not in --worker-hosts asks the chief for a task
// index. Its request proves the cluster secret and shows the fingerprint as
// a listed worker's hello does (over TLS where TLS is on); the chief assigns
// the next index after the listed workers and earlier joiners, and the node
// then trains as that task (runtime/node/node.cpp).
#pragma once

#include <cstddef>

#include "config/options.hpp"
#include "model/layout.hpp"
#include "protocol/messages.hpp"

namespace downpour {

// The chief this worker node talks to: --join's, else worker 0's address.
host_port chief_host(const options& opts);

// The task index the chief assigned; a refusal of the chief is
// errc::join_refused with the chief's reason (exit 2).
caf::expected<std::size_t> join_job(caf::actor_system& sys, const options& opts,
                                    const model_layout& layout, const supervisor_actor& chief);

}  // namespace downpour
