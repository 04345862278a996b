#include "runtime/node/hello.hpp"

#include "config/cluster_fingerprint.hpp"

namespace downpour {

caf::error hello_shard(caf::scoped_actor& self, const options& opts, const shard_actor& shard,
                       std::size_t k, caf::timespan timeout) {
  caf::error failure;
  self->request(shard, timeout, hello_atom_v, cluster_fingerprint(opts),
                static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(opts.task))
      .receive([](std::int64_t) {}, [&](caf::error& err) { failure = std::move(err); });
  return failure;
}

caf::error check_peers(caf::actor_system& sys, const options& opts,
                       const std::vector<shard_actor>& shards, caf::timespan timeout) {
  caf::scoped_actor self{sys};
  caf::error failure;
  for (std::size_t k = 0; k < shards.size() && !failure; ++k)
    failure = hello_shard(self, opts, shards[k], k, timeout);
  return failure;
}

}  // namespace downpour
