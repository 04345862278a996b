// The first words of the chief to a shard: this node's fingerprint (settings
// and model, runtime/node/job.hpp) and the shard it takes it for. The chief's start and its recovery of a lost ps
// both begin with it.
#pragma once

#include <cstddef>
#include <vector>

#include "protocol/messages.hpp"
#include "config/options.hpp"
#include "model/layout.hpp"

namespace downpour {

// The hello to send to h: with a proof of the cluster secret, over a nonce
// asked of h, when the cluster has one (protocol/hello.hpp).
template <class Handle>
caf::expected<hello_msg> signed_hello(caf::scoped_actor& self, const Handle& h,
                                      const options& opts, hello_msg m, caf::timespan timeout) {
  if (opts.cluster_secret.empty()) return m;
  caf::expected<std::string> nonce{caf::make_error(caf::sec::request_timeout)};
  self->request(h, timeout, challenge_atom_v)
      .receive([&](std::string& n) { nonce = std::move(n); },
               [&](caf::error& err) { nonce = std::move(err); });
  if (!nonce) return nonce.error();
  m.proof = hello_proof(opts.cluster_secret, *nonce, m, self->node());
  return m;
}

// Says hello to shard k: this node's settings and the shard it takes it for
// (with its worker index; 0 is the chief). A shard serves a remote node
// nothing else before. The shard's refusal or a failure is returned:
// caf::sec::request_receiver_down when the handle is of a lost connection
// (connect again), caf::sec::request_timeout when no answer came in time.
caf::error hello_shard(caf::scoped_actor& self, const options& opts, const model_layout& layout,
                       const shard_actor& shard, std::size_t k, caf::timespan timeout);

// The same from a ps that keeps a backup of shard k (--ps-replicas 2): the
// shard admits its node as a member that may attach a backup, nothing more.
caf::error hello_as_replica(caf::scoped_actor& self, const options& opts,
                            const model_layout& layout, const shard_actor& shard, std::size_t k,
                            caf::timespan timeout);

// Says hello to every shard; the first mismatch or failure is returned (a
// shard that did not answer in time named as unreachable).
caf::error check_peers(caf::actor_system& sys, const options& opts, const model_layout& layout,
                       const std::vector<shard_actor>& shards, caf::timespan timeout);

}  // namespace downpour
