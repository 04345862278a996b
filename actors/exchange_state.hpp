// The exchange's state, shared by exchange.cpp (who waits, when to flush)
// and exchange_flush.cpp (the merged messages and their answers). Not part
// of the protocol: only the exchange includes it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "actors/exchange_config.hpp"
#include "protocol/peer_guard.hpp"

namespace downpour {

template <class T>
using promise_of = caf::typed_response_promise<T>;

// A push_msg (answered with the shard's step) or a push_pull (with the
// push's fate and the rows of its pull).
struct queued_push {
  caf::actor_addr from;
  push_msg push;
  std::optional<row_pull> pull;
  promise_of<std::int64_t> alone;
  promise_of<push_pull_reply> with_pull;
};

struct queued_pull {
  caf::actor_addr from;
  std::optional<row_pull> rows;  // none: the dense parameters only
  promise_of<pull_reply> promise;
};

// What one trainer waits for: requests queued here, sent ones the shard
// answers at once, and sent pulls of a step the shard has not reached.
struct trainer_load {
  std::size_t queued = 0;
  std::size_t quick = 0;
  std::size_t blocked = 0;
};

// What the exchange merged, for the line it logs at its end.
struct exchange_counts {
  std::uint64_t messages = 0;    // requests sent to the shard
  std::uint64_t requests = 0;    // trainers' requests they carried
  std::uint64_t keys_asked = 0;  // keys the trainers' row pulls named
  std::uint64_t keys_sent = 0;   // keys of the merged row pulls sent
};

// "exchange to shard K: M messages carried R trainer requests; row pulls
// asked for A keys, sent S after dedup (ratio A/S)", read back by
// test/support/log_lines.hpp's exchange_stats_of.
std::string exchange_stats_line(std::size_t shard, const exchange_counts& c);

struct exchange_state {
  // Logged however the exchange ends: once no trainer holds it, it ends
  // unreachable, without a message or handler of its own.
  ~exchange_state() { cfg.log.info(exchange_stats_line(cfg.shard_index, counts)); }

  exchange_config cfg;
  peer_guard guard;
  std::vector<queued_push> pushes;
  std::map<std::int64_t, std::vector<queued_pull>> pulls;  // by min_step
  std::map<caf::actor_addr, trainer_load> trainers;
  std::size_t gone = 0;          // trainers that ended
  std::int64_t known_step = -1;  // the shard's step in its last answer
  std::uint64_t timer = 0;       // the gather timer that counts; 0: none armed
  std::uint64_t timers = 0;
  exchange_counts counts;
  static inline const char* name = "exchange";
};


using exchange_pointer = exchange_actor::stateful_pointer<exchange_state>;

enum class wait_kind { quick, blocked };

// exchange.cpp: a request sent is counted for its trainer until answered;
// a pull of a step past the shard's last known one blocks there, a push
// (and the pull that follows it) is answered at once.
wait_kind wait_for_pull(const exchange_state& st, std::int64_t min_step);
void count_sent(exchange_state& st, const caf::actor_addr& from, wait_kind kind);
void count_answered(exchange_state& st, const caf::actor_addr& from, wait_kind kind);
// Flushes once every live trainer waits (or arms the gather timer).
void maybe_flush(exchange_pointer self);

// exchange_flush.cpp: everything queued, to the shard.
void flush(exchange_pointer self);

}  // namespace downpour
