// A node's hello: what it claims to be (its settings, the shard it takes the
// receiver for, its worker index) and, when the cluster has a shared secret
// (--cluster-secret-file), a proof that it holds it. The proof is an
// HMAC-SHA256 of a nonce the receiver issued to this very node, of the
// claims and of the node's id, so a sniffed hello admits no one: its nonce is
// spent, and it names another node (Erlang's distribution cookie works the
// same way).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <string>

#include "caf/all.hpp"

namespace downpour {

struct hello_msg {
  // The receiver the hello is meant for: shard k, or the chief's supervisor.
  static constexpr std::uint32_t to_chief = std::numeric_limits<std::uint32_t>::max();

  std::string fingerprint;  // the sender's cluster settings (runtime/node/job.hpp)
  std::uint32_t shard = 0;  // the shard it takes the receiver for, or to_chief
  std::uint32_t worker = 0;  // the sender's worker index, 0: the chief
  std::string proof;        // hex HMAC over a nonce; empty without a secret
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, hello_msg& x) {
  return f(caf::meta::type_name("hello_msg"), x.fingerprint, x.shard, x.worker, x.proof);
}

// HMAC-SHA256(key, text) as 64 lowercase hex digits.
std::string hmac_sha256_hex(const std::string& key, const std::string& text);

// The proof a node with id `node` gives for hello `m` answering `nonce`.
std::string hello_proof(const std::string& secret, const std::string& nonce, const hello_msg& m,
                        const caf::node_id& node);

// Nonces issued to remote nodes, one per node, each good for one hello. The
// book is bounded: a stranger asking from many nodes pushes out the oldest
// nonces (whose holders ask again), never grows the receiver's memory.
class nonce_book {
 public:
  static constexpr std::size_t capacity = 1024;

  // A fresh random nonce for this node (replacing one it had).
  std::string issue(const caf::node_id& node);
  // The nonce issued to this node, removed: a nonce proves one hello only.
  std::optional<std::string> take(const caf::node_id& node);

 private:
  struct entry {
    caf::node_id node;
    std::string nonce;
  };
  std::deque<entry> entries_;
};

// Whether the hello proves the secret for the nonce the node was issued
// (spending that nonce either way). Without a secret every hello passes.
bool proves_secret(const std::string& secret, nonce_book& nonces, const hello_msg& m,
                   const caf::node_id& node);

}  // namespace downpour
