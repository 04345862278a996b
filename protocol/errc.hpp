// The one error enum between actors, registered with CAF as its own error
// category ("downpour"); every message declared in protocol/messages.hpp
// fails with one of these values.
#pragma once

#include <cstdint>
#include <string>

#include "caf/all.hpp"

namespace downpour {

// The one error enum between actors: one value per distinct failure (the
// context string says which peer, step or size). Values keep their numbers:
// new ones go last, with their name and meaning in protocol/errc.cpp.
enum class errc : std::uint8_t {
  config_mismatch = 1,  // a peer was started with a different cluster config
  shape_mismatch,       // sizes of a push, pull reply, init or restore do not fit
  not_finite,           // a gradient holds NaN or inf
  stopped,              // the job is over
  unreachable,          // a peer could not be reached or listened for
  recovering,           // a ps went down: no tickets until every shard is restored
  failed,               // an exception ended an actor; the context is its message
  unauthorized,         // a message from a node that did not prove it belongs to the cluster
  interrupted,          // the job was stopped (a signal) with a checkpoint at its stop step
  diverged,             // a non-finite loss or gradient: the job fails, nothing more is saved
  not_initialised,      // a push reached a shard before the chief initialised it
  future_step,          // a push stamped with a step the shard has not reached
  unoffered_replay,     // a shard answered "replayed" to a pull that offered no update
  save_failed,          // a checkpoint could not be written; training goes on
  restored,             // the shard was restored: waits from before the restore fail
  step_passed,          // a snapshot for a step the shard has already passed
  bad_keys,             // row keys out of the shard's range, not ascending or twice
  unpulled_rows,        // a push of rows the worker did not pull
  join_refused,         // the chief refused a --join: a config of its own, exit 2
  fenced,               // a push from a worker of the epoch before a failover
  no_copy,              // a ps asked for a copy of a shard it does not keep
};

// The value's name, as CAF renders it: "shape_mismatch".
std::string to_string(errc x);

// What the value means, one line, for an error that carries no context.
const char* explain(errc x);

}  // namespace downpour

CAF_ERROR_CODE_ENUM(downpour::errc, "downpour")
