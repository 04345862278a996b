#include "runtime/node/failover.hpp"

#include <algorithm>
#include <chrono>
#include <string>

#include "config/durations.hpp"
#include "reporting/log.hpp"
#include "runtime/net/connect.hpp"
#include "runtime/node/hello.hpp"

namespace downpour {
namespace {

std::string ps_name(std::size_t k) { return "ps " + std::to_string(k); }

// One request, its answer or its failure (a blocking actor's receive).
template <class T, class Handle, class... Ts>
caf::expected<T> ask(caf::scoped_actor& self, const Handle& to, caf::timespan timeout,
                     Ts&&... xs) {
  caf::expected<T> out{caf::make_error(caf::sec::request_timeout)};
  self->request(to, timeout, std::forward<Ts>(xs)...)
      .receive([&](T& x) { out = std::move(x); }, [&](caf::error& err) { out = std::move(err); });
  return out;
}

// The copy of shard k that ps `host` keeps, asked of that ps itself; the
// caller said hello to it first (a ps started again knows nobody yet).
caf::expected<shard_actor> copy_on(caf::scoped_actor& self, const shard_actor& host,
                                   std::size_t k, caf::timespan timeout) {
  auto copy = ask<caf::actor>(self, host, timeout, replica_atom_v, static_cast<std::uint32_t>(k));
  if (!copy) return copy.error();
  return caf::actor_cast<shard_actor>(*copy);
}

// The ps that keeps shard k's backup: the next one while k is served by its
// own ps, else k's own ps, started again and caught up (catch_up).
std::size_t backup_holder(std::size_t k, const std::vector<std::uint32_t>& hosts) {
  return hosts[k] == k ? backup_host(k, hosts.size()) : k;
}

caf::expected<shard_actor> promote(caf::scoped_actor& self, const options& opts,
                                   const model_layout& layout,
                                   const std::vector<std::uint32_t>& hosts, std::size_t k) {
  const auto timeout = timespan_of(opts.connect_timeout_s);
  const std::size_t h = backup_holder(k, hosts);
  auto none_left = [&](const caf::error& why) {
    return make_node_error(errc::no_copy, "shard " + std::to_string(k) +
                                              " has no live copy left (its backup was on " +
                                              ps_name(h) + ": " + describe(why) + ")");
  };
  // The ps's own door, asked afresh: a dead one refuses the connection at once.
  auto holder = connect_live_until<shard_actor>(self->home_system(), opts, opts.ps_hosts[h],
                                                ps_name(h), deadline::in_seconds(1));
  if (!holder) return none_left(holder.error());
  if (auto err = hello_shard(self, opts, layout, *holder, h, timeout)) return none_left(err);
  auto copy = copy_on(self, *holder, k, timeout);
  if (!copy) return none_left(copy.error());
  if (auto err = hello_shard(self, opts, layout, *copy, k, timeout)) return err;
  auto step = ask<std::int64_t>(self, *copy, timeout, replica_atom_v, replica_set{{}, {}});
  if (!step) return step.error();
  return copy;
}

// Fenced first, so no push of the lost epoch lands after its shard's step
// was read: then every shard stands at the furthest of them.
// CAF 0.17 drops what is sent to a proxy whose connection was lost: the
// request goes in slices, the handle checked before each (a shard found lost
// here, after the others, is caf::sec::request_receiver_down).
template <class T, class... Ts>
caf::expected<T> ask_live(caf::scoped_actor& self, const shard_actor& to, caf::timespan timeout,
                          Ts... xs) {
  const deadline until{timeout};
  for (;;) {
    if (is_gone(self->home_system(), to)) return caf::sec::request_receiver_down;
    const auto slice = std::clamp(until.left(), caf::timespan{std::chrono::milliseconds(1)},
                                  caf::timespan{std::chrono::milliseconds(500)});
    auto answer = ask<T>(self, to, slice, xs...);
    if (answer || answer.error() != caf::sec::request_timeout || until.passed()) return answer;
  }
}

// Where the fences left the shards: the step all stand at, the updates
// lost (sync: rounds some shard took alone; they have no seq) and the
// pushes owed until sent again (async, ssp).
struct alignment {
  std::int64_t step = 0;
  std::int64_t lost = 0;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> owed;
};

caf::expected<alignment> align(caf::scoped_actor& self, const std::vector<shard_actor>& shards,
                               caf::timespan timeout) {
  std::vector<fence_report> reports;
  for (const auto& s : shards) {
    auto report = ask_live<fence_report>(self, s, timeout, failover_atom_v);
    if (!report) return report.error();
    reports.push_back(std::move(*report));
  }
  const auto plans = plan_failover(reports);
  for (std::size_t k = 0; k < shards.size(); ++k)
    if (auto step = ask_live<std::int64_t>(self, shards[k], timeout, failover_atom_v, plans[k]);
        !step)
      return step.error();
  alignment out{plans.front().step, 0, owed_pushes(plans)};
  if (out.owed.empty())
    for (const auto& r : reports) out.lost = std::max(out.lost, out.step - r.step);
  return out;
}

}  // namespace

std::size_t shard_backed_up_by(std::size_t task, std::size_t ps) { return (task + ps - 1) % ps; }

std::size_t backup_host(std::size_t k, std::size_t ps) { return (k + 1) % ps; }

caf::error attach_backup(caf::actor_system& sys, const options& opts, const model_layout& layout,
                         const shard_actor& backup) {
  const std::size_t j = shard_backed_up_by(opts.task, opts.ps_hosts.size());
  const auto timeout = timespan_of(opts.connect_timeout_s);
  auto primary = connect_live<shard_actor>(sys, opts, opts.ps_hosts[j], ps_name(j));
  if (!primary) return primary.error();
  caf::scoped_actor self{sys};
  if (auto err = hello_as_replica(self, opts, layout, *primary, j, timeout)) return err;
  self->send(backup, replica_atom_v, replica_set{{}, caf::actor_cast<caf::actor>(*primary)});
  auto step = ask<std::int64_t>(self, *primary, timeout, replica_atom_v,
                                caf::actor_cast<caf::actor>(backup));
  if (!step) return step.error();
  node_logger(opts, role_kind::ps, opts.task)
      .info("keeps the backup of shard " + std::to_string(j) + " (its primary at global step " +
            std::to_string(*step) + ")");
  return caf::none;
}

namespace {

// Shard k's copy on ps h, which serves it since a failover, takes `shard`
// as its backup (its whole state sent first); the step it stands at.
caf::expected<std::int64_t> back_up_live_copy(caf::actor_system& sys, const options& opts,
                                              const model_layout& layout,
                                              const shard_actor& shard, std::size_t h) {
  const std::size_t k = opts.task;
  caf::scoped_actor self{sys};
  const auto timeout = timespan_of(opts.connect_timeout_s);
  auto door = connect_live<shard_actor>(sys, opts, opts.ps_hosts[h], ps_name(h));
  if (!door) return door.error();
  if (auto err = hello_as_replica(self, opts, layout, *door, h, timeout)) return err;
  auto primary = copy_on(self, *door, k, timeout);
  if (!primary) return primary.error();
  if (auto err = hello_as_replica(self, opts, layout, *primary, k, timeout)) return err;
  self->send(shard, replica_atom_v, replica_set{{}, caf::actor_cast<caf::actor>(*primary)});
  return ask<std::int64_t>(self, *primary, timeout, replica_atom_v,
                           caf::actor_cast<caf::actor>(shard));
}

// The ps serving each shard, as the chief's supervisor places them.
caf::expected<std::vector<std::uint32_t>> placed_shards(caf::actor_system& sys,
                                                        const options& opts,
                                                        const supervisor_actor& chief) {
  caf::scoped_actor self{sys};
  auto hosts = ask<std::vector<std::uint32_t>>(self, chief, timespan_of(opts.connect_timeout_s),
                                               replica_atom_v);
  if (hosts && hosts->size() != opts.ps_hosts.size())
    return make_node_error(errc::shape_mismatch,
                           "the chief places " + std::to_string(hosts->size()) + " shards, not " +
                               std::to_string(opts.ps_hosts.size()));
  return hosts;
}

}  // namespace

caf::error catch_up(caf::actor_system& sys, const options& opts, const model_layout& layout,
                    const shard_actor& shard) {
  const std::size_t k = opts.task;
  auto chief = connect_live<supervisor_actor>(sys, opts, opts.worker_hosts[0],
                                              "the chief (worker 0)");
  if (!chief) return caf::none;  // no chief yet: a fresh job, which inits this shard
  auto hosts = placed_shards(sys, opts, *chief);
  if (!hosts || (*hosts)[k] == k) return caf::none;
  const std::size_t h = (*hosts)[k];
  auto step = back_up_live_copy(sys, opts, layout, shard, h);
  if (!step) return step.error();
  node_logger(opts, role_kind::ps, opts.task)
      .info("catches up on shard " + std::to_string(k) + " from " + ps_name(h) +
            " (at global step " + std::to_string(*step) + ") and keeps its backup");
  return caf::none;
}

caf::error rejoin_after_hang(caf::actor_system& sys, const options& opts,
                             const model_layout& layout, const supervisor_actor& chief,
                             const shard_actor& shard, const shard_actor& backup) {
  const std::size_t k = opts.task;
  auto hosts = placed_shards(sys, opts, chief);
  if (!hosts) return hosts.error();
  if ((*hosts)[k] == k) return caf::none;  // still its own: the chief lost nothing of this ps
  const std::size_t h = (*hosts)[k];
  auto step = back_up_live_copy(sys, opts, layout, shard, h);
  if (!step) return step.error();
  node_logger(opts, role_kind::ps, opts.task)
      .warn("its shard " + std::to_string(k) + " failed over to " + ps_name(h) +
            " while this ps was unreachable: rejoins as the backup of shard " + std::to_string(k) +
            " (at global step " + std::to_string(*step) + "), its own copy retired");
  // The neighbour's primary dropped this backup with the connection.
  const std::size_t j = shard_backed_up_by(k, opts.ps_hosts.size());
  if ((*hosts)[j] != j) return caf::none;  // that shard is a backup's now: nobody to attach to
  return attach_backup(sys, opts, layout, backup);
}

caf::expected<failed_over> fail_over(caf::actor_system& sys, const options& opts,
                                     const model_layout& layout, std::vector<shard_actor> shards,
                                     std::vector<std::uint32_t> hosts) {
  const auto began = std::chrono::steady_clock::now();
  caf::scoped_actor self{sys};
  const logger log = node_logger(opts, role_kind::worker, 0);
  const auto timeout = timespan_of(opts.connect_timeout_s);
  // A ps's shards are found gone one by one: one seen only while aligning
  // is failed over too, and the alignment begins again.
  caf::expected<alignment> at{caf::sec::request_receiver_down};
  while (!at && at.error() == caf::sec::request_receiver_down) {
    for (std::size_t k = 0; k < shards.size(); ++k) {
      if (!is_gone(sys, shards[k])) continue;
      const auto h = backup_holder(k, hosts);
      auto copy = promote(self, opts, layout, hosts, k);
      if (!copy) return copy.error();
      shards[k] = std::move(*copy);
      hosts[k] = static_cast<std::uint32_t>(h);
      log.info("chief: shard " + std::to_string(k) + " fails over to its backup on " +
               ps_name(hosts[k]));
    }
    at = align(self, shards, timeout);
  }
  if (!at) return at.error();
  log.info("chief: failed over in " + fixed_text(seconds_since(began), 3) +
           " s; every shard is at global step " + std::to_string(at->step) + ", " +
           std::to_string(at->owed.size()) + " update(s) owed until their workers send them again, " +
           std::to_string(at->lost) + " lost (taken by a lost primary alone)");
  return failed_over{std::move(shards), std::move(hosts), at->step, at->lost, std::move(at->owed)};
}

caf::expected<std::vector<shard_actor>> place_shards(caf::actor_system& sys, const options& opts,
                                                     const model_layout& layout,
                                                     const supervisor_actor& supervisor,
                                                     std::vector<shard_actor> shards) {
  caf::scoped_actor self{sys};
  const auto timeout = timespan_of(opts.connect_timeout_s);
  auto hosts = ask<std::vector<std::uint32_t>>(self, supervisor, timeout, replica_atom_v);
  if (!hosts) return hosts.error();
  if (hosts->size() != shards.size())
    return make_node_error(errc::shape_mismatch,
                           "the chief places " + std::to_string(hosts->size()) + " shards, not " +
                               std::to_string(shards.size()));
  // The ps serving their own shard first. One gone may be one the chief has
  // not yet seen go (its failover is still to come): join again then.
  for (std::size_t k = 0; k < shards.size(); ++k) {
    if ((*hosts)[k] != k || !is_gone(sys, shards[k])) continue;
    auto h = connect_live_until<shard_actor>(sys, opts, opts.ps_hosts[k], ps_name(k),
                                             deadline::in_seconds(0.2));
    if (!h) return caf::sec::request_receiver_down;
    shards[k] = std::move(*h);
  }
  for (std::size_t k = 0; k < shards.size(); ++k) {
    const auto h = (*hosts)[k];
    if (h == k) continue;
    if (h >= shards.size() || (*hosts)[h] != h)
      return make_node_error(errc::no_copy, "the chief places shard " + std::to_string(k) +
                                                " on " + ps_name(h) + ", which serves no shard");
    if (auto err = hello_shard(self, opts, layout, shards[h], h, timeout)) return err;
    auto copy = copy_on(self, shards[h], k, timeout);
    if (!copy) return copy.error();
    shards[k] = std::move(*copy);
  }
  return shards;
}

}  // namespace downpour
