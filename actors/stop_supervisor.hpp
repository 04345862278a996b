// The stop-at-step supervisor on the chief. In async and ssp modes it hands
// out one step ticket per push, exactly last_step - start_step of them, so the
// final global step is exact with no asynchronous overshoot; a worker that
// dies or whose push a shard refuses gives the ticket back, and an ask after
// the last ticket waits while such a ticket may still come back (so it always
// has a taker). In sync mode the shards stop
// aggregating at last_step by themselves. Once every shard stands at
// last_step it has the last checkpoint written and answers end requests, and
// the job shuts down.
// Told to stop (a signal), it hands out no more tickets, waits until every
// push is applied and has the checkpoint of that step written before it
// answers; a non-finite batch beyond --max-bad-batches fails the job.
// A lost ps pauses it (no tickets, hellos held) until the chief restores
// every shard. With --ticket-lease L > 1 a worker takes up to L tickets per
// request and gives back those it did not use (supervisor_leases.cpp).
// Its phases are the middle of the chief's lifecycle
// (actors/chief_phase.hpp draws them). Its parts: supervisor_tickets.cpp (tickets, the stop, the
// drain, the job's end), supervisor_leases.cpp (tickets by the block),
// supervisor_ticket_waiters.cpp (asks after the last
// ticket), supervisor_recovery.cpp (hellos and recovery
// epochs), supervisor_status.cpp (progress and status); stop_supervisor.cpp
// routes each message to one of them.
#pragma once

#include <cstdint>

#include "protocol/messages.hpp"
#include "actors/supervisor_config.hpp"

namespace downpour {

supervisor_actor spawn_stop_supervisor(caf::actor_system& sys, supervisor_config cfg);

// Pure rule: the ticket for the next push, or -1 once last_step tickets are out.
std::int64_t next_ticket(std::int64_t granted, std::int64_t last_step);

}  // namespace downpour
