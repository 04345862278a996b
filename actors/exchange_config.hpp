// What an exchange is spawned with (actors/exchange.hpp draws what it does).
#pragma once

#include <chrono>
#include <cstddef>

#include "model/layout.hpp"
#include "protocol/messages.hpp"
#include "reporting/log.hpp"

namespace downpour {

struct exchange_config {
  shard_actor shard;
  std::size_t trainers = 2;  // in this process
  row_space rows;            // the model's row variables' keys; empty: dense
  // How long a ready request waits for the other trainers before it goes
  // without them: a trainer held up elsewhere (its ticket, the ssp clock,
  // a slow batch) delays the others at most this long.
  caf::timespan gather = std::chrono::milliseconds(2);
  std::size_t shard_index = 0;  // named in its stats line
  logger log;                   // the trainers' node
};

// The exchange's own timer comes on top of what it serves.
using exchange_actor = shard_link::extend<caf::reacts_to<tick_atom, std::uint64_t>>;

}  // namespace downpour
