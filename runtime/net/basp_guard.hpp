// What a network peer can make a node do, bounded from outside Debian's
// libcaf_io and libcaf_core (as runtime/tls_guard does for libcaf_openssl):
// allocate at most one message of this job's largest size per connection
// (and, before the handshake, no more than a handshake needs, in all),
// and never end an actor with an uncatchable `kill` from another node.
#pragma once

#include <cstddef>

#include "reporting/log.hpp"
#include "runtime/net/handshake_ledger.hpp"

namespace downpour {

// The largest BASP payload a node of this job accepts: a shard's parameters
// and shadows (an init, a restore or a snapshot) for the whole model of
// model_floats floats, plus 1 MiB for everything else a message carries.
// A model with a sparse variable adds row_bytes: its largest row message
// (protocol/row_pages.hpp: rows move page by page, so this does not grow
// with N). With K trainers per worker process (--trainers) a push batch
// carries up to K gradients and their rows (actors/exchange.hpp), so the
// bound counts K of each; K = 1 is a single worker's.
std::size_t basp_payload_bound(std::size_t model_floats, std::uint64_t row_bytes = 0,
                               std::size_t trainers = 1);

// Sets the bound of this process and the logger of its refusals. One process
// runs one job (--role=local --transport=tcp runs every node of the same
// job), so the bound is the process's, like the libcaf_io functions that
// enforce it. Calling it is also what links runtime/net/basp_guard.cpp in.
void guard_basp(std::size_t bound, const logger& log);

}  // namespace downpour
