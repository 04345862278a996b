// What a worker and a shard exchange at every step: pulls and their
// answers, pushes, a push with the next pull, and the pushes of several
// trainers of one process in one message (actors/exchange.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "protocol/key_list.hpp"
#include "protocol/row_messages.hpp"
#include "protocol/tensor.hpp"
#include "caf/all.hpp"
#include "data/read_position.hpp"

namespace downpour {

// Shard -> worker: the shard's parameters and the updates applied so far;
// replayed: the worker's own offered update is the only one since its pull,
// so it holds these parameters already and params is empty. rows: the
// values of a row_pull's keys, in its order.
struct pull_reply {
  std::int64_t step = 0;
  shared_tensor params;
  bool replayed = false;
  tensor rows;

  pull_reply() = default;
  pull_reply(std::int64_t s, shared_tensor p, bool r = false, tensor rs = {})
      : step(s), params(std::move(p)), replayed(r), rows(std::move(rs)) {}
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, pull_reply& x) {
  return metered(f, peer_kind::worker, [&] {
    return f(caf::meta::type_name("pull_reply"), x.step, x.params, x.replayed, x.rows);
  });
}

// Worker -> shard: a pull from a worker that applied its own push, stamped
// `base`, to its copy itself with the learning rate whose bits are lr_bits.
// Bits, not a float: the default inspector does not carry floats exactly.
struct replay_offer {
  std::uint32_t worker = 0;
  std::int64_t base = 0;
  std::uint32_t lr_bits = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, replay_offer& x) {
  return f(caf::meta::type_name("replay_offer"), x.worker, x.base, x.lr_bits);
}

// Worker -> shard: a gradient for the shard's ranges, stamped with the global
// step its parameters were pulled at; with a sparse variable also the
// gradient of the rows keys (those of the worker's last row_pull), in order;
// with streamed input, where the worker's reading stands after the
// gradient's batch (one entry; none for data in memory: a byte on the wire).
struct push_msg {
  std::int64_t step = 0;
  std::uint32_t worker = 0;
  shared_tensor grad;
  key_list keys;
  tensor rows;
  std::vector<read_position> position;
  // Async and ssp with a keeper (--ps-replicas 2): the push's number, which
  // no other push of the job has (protocol/push_ledger.hpp); 0: none.
  std::uint64_t seq = 0;

  push_msg() = default;
  push_msg(std::int64_t s, std::uint32_t w, shared_tensor g, key_list k = {}, tensor r = {})
      : step(s), worker(w), grad(std::move(g)), keys(std::move(k)), rows(std::move(r)) {}
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, push_msg& x) {
  return metered(f, peer_kind::worker, [&] {
    return f(caf::meta::type_name("push_msg"), x.step, x.worker, x.grad, x.keys, x.rows,
             x.position, x.seq);
  });
}

// A trainer -> its node's push keeper: a push to shard `shard` it had no
// answer to when that shard's ps was lost, sent again after the failover.
struct kept_push {
  std::uint32_t shard = 0;
  push_msg push;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, kept_push& x) {
  return f(caf::meta::type_name("kept_push"), x.shard, x.push);
}

// Worker -> shard, async with a sparse variable: a step's push and the pull
// of the next step's rows in one message, as the two would follow each
// other anyway. The shard takes (or refuses) the push, then answers the pull.
// Its parts (and the reply's pull_reply) count their own bytes on the wire.
struct push_pull {
  push_msg push;
  row_pull pull;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, push_pull& x) {
  return f(caf::meta::type_name("push_pull"), x.push, x.pull);
}

// Shard -> worker: the step after the push or why it was refused, and the pull's answer.
struct push_pull_reply {
  std::int64_t pushed = 0;
  caf::error refusal;
  pull_reply pull;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, push_pull_reply& x) {
  return f(caf::meta::type_name("push_pull_reply"), x.pushed, x.refusal, x.pull);
}

// Exchange -> shard: the pushes of the trainers of one worker process that
// were ready together, in order, each applied as its own update exactly as
// if it came alone; with the pulls of the push_pulls among them merged into
// one (none, or one row_pull whose sharers name the other trainers).
struct push_batch {
  std::vector<push_msg> pushes;
  std::vector<row_pull> pull;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, push_batch& x) {
  return f(caf::meta::type_name("push_batch"), x.pushes, x.pull);
}

// Shard -> exchange: per push, why it was refused (none: taken); the
// shard's step after them; the merged pull's answer or why it was refused.
struct push_batch_reply {
  std::vector<caf::error> refusals;
  std::int64_t step = 0;
  caf::error pull_refusal;
  std::vector<pull_reply> pull;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, push_batch_reply& x) {
  return f(caf::meta::type_name("push_batch_reply"), x.refusals, x.step, x.pull_refusal, x.pull);
}

}  // namespace downpour
