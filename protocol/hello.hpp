// A node's hello: what it claims to be (its settings, the shard it takes the
// receiver for, its worker index) and, when the cluster has a shared secret
// (--cluster-secret-file), a proof that it holds it. The proof is an
// HMAC-SHA256 of a nonce the receiver issued to this very node, of the
// claims and of the node's id, so a sniffed hello admits no one: its nonce is
// spent, and it names another node (Erlang's distribution cookie works the
// same way).
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "protocol/hello_proof.hpp"
#include "caf/all.hpp"

namespace downpour {

struct hello_msg {
  // The receiver the hello is meant for: shard k, or the chief's supervisor.
  static constexpr std::uint32_t to_chief = std::numeric_limits<std::uint32_t>::max();
  // The worker a join request names (--join): the chief assigns the index.
  static constexpr std::uint32_t joining = std::numeric_limits<std::uint32_t>::max();
  // The worker index of a ps's hello to a shard it keeps a backup of.
  static constexpr std::uint32_t from_replica = std::numeric_limits<std::uint32_t>::max() - 1;

  std::string fingerprint;  // the sender's cluster settings (runtime/node/job.hpp)
  std::uint32_t shard = 0;  // the shard it takes the receiver for, or to_chief
  std::uint32_t worker = 0;  // the sender's worker index, 0: the chief
  std::string proof;        // hex HMAC over a nonce; empty without a secret
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, hello_msg& x) {
  return f(caf::meta::type_name("hello_msg"), x.fingerprint, x.shard, x.worker, x.proof);
}

// The proof a node with id `node` gives for hello `m` answering `nonce`.
inline std::string hello_proof(const std::string& secret, const std::string& nonce,
                               const hello_msg& m, const caf::node_id& node) {
  return proof_of(secret, hello_claims{nonce, m.fingerprint, m.shard, m.worker, to_string(node)});
}

// Whether the hello proves the secret for the nonce the node was issued
// (spending that nonce either way). Without a secret every hello passes.
inline bool proves_secret(const std::string& secret, nonce_book& nonces, const hello_msg& m,
                          const caf::node_id& node) {
  if (secret.empty()) return true;
  const auto nonce = nonces.take(to_string(node));
  return nonce && same_proof(hello_proof(secret, *nonce, m, node), m.proof);
}

}  // namespace downpour
