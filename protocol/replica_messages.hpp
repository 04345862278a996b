// What the copies of a replicated shard (--ps-replicas R > 1) exchange:
// the chief tells each copy its role, and a primary sends a new backup its
// whole state, then every push it took, in order, with its verdict
// (docs/failure-model.md). Included by protocol/messages.hpp after shard_init.
#pragma once

#include <cstdint>
#include <vector>

#include "protocol/push_messages.hpp"
#include "caf/all.hpp"

namespace downpour {

// What a backup does with one of the primary's steps, in their order.
enum class replica_step : std::uint8_t {
  taken_push = 0,    // the next of pushes, which the primary took
  refused_push = 1,  // the next of pushes, which the primary refused: so must the backup
  row_pull = 2,      // the next of pulls: what a worker may push next (actors/shard_rows.hpp)
  filled_push = 3,   // the next of pushes, sent again after a failover and owed here
};

// Primary -> backup, in this order within one message: pages of the rows
// of the state to come, staged as an init's are (protocol/row_pages.hpp);
// the primary's whole state to stand at (none, or one: a new backup's,
// rows in its last page); the pushes the primary took or refused, as they
// came (the gradient before the update was written over it), and the row
// pulls it served, interleaved as steps says; required: a new sync round
// size (0: the same). Gradients travel as blobs, never float by float.
struct replica_update {
  std::vector<row_part> pages;
  std::vector<shard_init> base;
  std::vector<push_msg> pushes;
  std::vector<row_pull> pulls;
  std::vector<std::uint8_t> steps;  // replica_step values
  std::uint64_t required = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, replica_update& x) {
  return f(caf::meta::type_name("replica_update"), x.pages, x.base, x.pushes, x.pulls, x.steps,
           x.required);
}

// Chief -> a copy of a shard: the backups it forwards its pushes to (none:
// it keeps them to itself) and the primary whose updates it takes (none:
// it is the primary). A promotion is a new set: backups, no primary.
// Untyped handles: a shard's own interface names this message.
struct replica_set {
  std::vector<caf::actor> backups;
  caf::actor primary;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, replica_set& x) {
  return f(caf::meta::type_name("replica_set"), x.backups, x.primary);
}

}  // namespace downpour
