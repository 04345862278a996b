// An exception escaping an actor's handler, or its start, ends that actor
// with errc::failed and the exception's message. CAF's default prints a line
// on stdout and ends it with a bare runtime_error, so whoever waits for the
// actor could neither say why nor tell it from a lost peer. Every actor of
// Downpour calls end_on_exception first thing; the node or the chief that
// watches it then ends with the message (runtime/node/job_watch.hpp).
#pragma once

#include "protocol/messages.hpp"

namespace downpour {

void end_on_exception(caf::scheduled_actor* self);

}  // namespace downpour
