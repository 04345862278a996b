// --ps-replicas 2 across processes (docs/failure-model.md): ps t keeps the
// backup of shard t-1 (its ring neighbour), attached to that primary; when a
// ps dies the chief promotes the backup of its shard instead of rolling every
// shard back, and workers find a moved shard on the ps that kept its backup.
#pragma once

#include <cstdint>
#include <vector>

#include "config/options.hpp"
#include "model/layout.hpp"
#include "protocol/messages.hpp"

namespace downpour {

// The shard whose backup ps `task` keeps, and the ps keeping shard k's.
std::size_t shard_backed_up_by(std::size_t task, std::size_t ps);
std::size_t backup_host(std::size_t k, std::size_t ps);

// A ps: says hello to the primary of the shard it backs up (waiting up to
// --connect-timeout for it), makes `backup` that primary's backup, which
// takes its whole state first.
caf::error attach_backup(caf::actor_system& sys, const options& opts, const model_layout& layout,
                         const shard_actor& backup);

// A ps started again while the chief serves its shard from the ps that
// kept its backup: the shard becomes that copy's backup, its state taken
// first, so another loss fails over to it. Nothing when the shard is its own.
caf::error catch_up(caf::actor_system& sys, const options& opts, const model_layout& layout,
                    const shard_actor& shard);

// A ps that went on after a hang the chief took for its death (SIGSTOP past
// --node-timeout), the chief reached again: when the chief moved its shard
// to the ps that kept its backup, its own copy, now stale, is retired as
// that copy's backup (it refuses workers' pushes, errc::fenced) and takes
// its state, as catch_up does; `backup` joins its neighbour's primary again.
// Nothing when the shard is still its own.
caf::error rejoin_after_hang(caf::actor_system& sys, const options& opts,
                             const model_layout& layout, const supervisor_actor& chief,
                             const shard_actor& shard, const shard_actor& backup);

struct failed_over {
  std::vector<shard_actor> shards;  // the lost ones replaced by their promoted backups
  std::vector<std::uint32_t> hosts;
  std::int64_t step = 0;  // where every shard stands now
  std::int64_t lost = 0;  // updates the lost primaries took alone (their part is missing)
  // Pushes some shard owes (seq, shards owing it) until sent again.
  std::vector<std::pair<std::uint64_t, std::uint32_t>> owed;
};

// The chief, a ps lost: promotes the backup of each lost shard, fences every
// shard against pushes of the lost epoch and brings them to one step.
// errc::no_copy when a lost shard's backup is gone too (a checkpoint restore
// is all that is left).
caf::expected<failed_over> fail_over(caf::actor_system& sys, const options& opts,
                                     const model_layout& layout, std::vector<shard_actor> shards,
                                     std::vector<std::uint32_t> hosts);

// A worker joining: the handles of the shards as the chief's supervisor
// places them, each asked of the ps that serves it (a handle relayed by
// another node would be routed through it: CAF 0.17, measured).
// caf::sec::request_receiver_down: a ps is gone that the chief still places
// a shard on (join again: the chief's answer waits for its failover).
caf::expected<std::vector<shard_actor>> place_shards(caf::actor_system& sys, const options& opts,
                                                     const model_layout& layout,
                                                     const supervisor_actor& supervisor,
                                                     std::vector<shard_actor> shards);

}  // namespace downpour
