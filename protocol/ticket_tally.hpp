// Worker -> supervisor with --ticket-lease > 1 (protocol/messages.hpp's
// lease and settle): the pushes every shard has answered since the worker
// last said, how many of them some shard refused (their tickets go back),
// and leased tickets it gives back unused.
#pragma once

#include <cstdint>

#include "caf/all.hpp"

namespace downpour {

struct ticket_tally {
  std::int64_t answered = 0;
  std::int64_t refused = 0;
  std::int64_t unused = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ticket_tally& x) {
  return f(caf::meta::type_name("ticket_tally"), x.answered, x.refused, x.unused);
}

}  // namespace downpour
