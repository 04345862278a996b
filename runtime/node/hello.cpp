#include "runtime/node/hello.hpp"

#include <algorithm>
#include <chrono>

#include "config/durations.hpp"
#include "runtime/net/connect.hpp"
#include "runtime/node/job.hpp"

namespace downpour {

namespace {

caf::error say_hello(caf::scoped_actor& self, const options& opts, const shard_actor& shard,
                     const hello_msg& unsigned_hello, caf::timespan timeout) {
  // CAF drops what is sent to a proxy whose connection was lost, without an
  // error: a hello to such a handle would wait out its whole timeout. So the
  // hello goes in slices, the handle checked before each.
  const deadline until{timeout};
  for (;;) {
    if (is_gone(self->home_system(), shard)) return caf::sec::request_receiver_down;
    const auto slice = std::clamp(until.left(), caf::timespan{std::chrono::milliseconds(1)},
                                  caf::timespan{std::chrono::seconds(1)});
    bool answered = false;
    caf::error failure;
    auto hello = signed_hello(self, shard, opts, unsigned_hello, slice);
    if (hello)
      self->request(shard, slice, hello_atom_v, *hello)
          .receive([&](std::int64_t) { answered = true; },
                   [&](caf::error& err) { failure = std::move(err); });
    else
      failure = std::move(hello.error());
    if (answered) return caf::none;
    if (failure != caf::sec::request_timeout || until.passed()) return failure;
  }
}

}  // namespace

caf::error hello_shard(caf::scoped_actor& self, const options& opts, const model_layout& layout,
                       const shard_actor& shard, std::size_t k, caf::timespan timeout) {
  return say_hello(self, opts, shard,
                   hello_msg{job_fingerprint(opts, layout), static_cast<std::uint32_t>(k),
                             static_cast<std::uint32_t>(opts.task), {}},
                   timeout);
}

caf::error hello_as_replica(caf::scoped_actor& self, const options& opts,
                            const model_layout& layout, const shard_actor& shard, std::size_t k,
                            caf::timespan timeout) {
  return say_hello(self, opts, shard,
                   hello_msg{job_fingerprint(opts, layout), static_cast<std::uint32_t>(k),
                             hello_msg::from_replica, {}},
                   timeout);
}

caf::error check_peers(caf::actor_system& sys, const options& opts, const model_layout& layout,
                       const std::vector<shard_actor>& shards, caf::timespan timeout) {
  caf::scoped_actor self{sys};
  for (std::size_t k = 0; k < shards.size(); ++k) {
    auto failure = hello_shard(self, opts, layout, shards[k], k, timeout);
    if (failure == caf::sec::request_timeout)  // hung, or cut off: name it
      return make_node_error(
          errc::unreachable,
          "cannot reach ps " + std::to_string(k) + " at " + to_string(opts.ps_hosts[k]) +
              ": it did not answer our hello within " +
              seconds_text(std::chrono::duration<double>(timeout).count()));
    if (failure) return failure;
  }
  return caf::none;
}

}  // namespace downpour
