// A parameter shard's part of a model's row variables: the keys [first,
// last) of their key space it owns (a range may span several variables),
// of which only the rows pushed exist (model/row_tables), and
// what each worker pulled and has not pushed yet, since a worker may push
// only rows it pulled.
// Async and ssp apply each push's rows at once; sync keeps a round's row
// gradients and applies their mean per row (TF's SparseConditionalAccumulator)
// when the round is complete. Refusals are errors with the reason; nothing
// of a refused push is applied.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <vector>

#include "config/options.hpp"
#include "protocol/messages.hpp"
#include "protocol/placement.hpp"
#include "model/row_tables.hpp"

namespace downpour {

class shard_rows {
 public:
  shard_rows(const row_tables_spec& spec, row_range owned, train_mode mode);

  // An init or restore: the rows owned and held from now on.
  caf::error load(const row_part& part);

  // Whether keys may be pulled: ascending, unique, in the rows owned.
  caf::error check_pull(const key_list& keys) const { return check_keys(keys, "a pull"); }

  // The values of the pull's keys for one of its worker's next batches,
  // remembered as rows it (and each of its sharers) may push.
  caf::expected<tensor> pull(const row_pull& p);

  // Whether the rows of a push may be applied: keys the worker pulled, each
  // with its variable's width of values, all finite. Async and ssp: a push
  // spends the oldest pull that holds its keys and every older one (a batch
  // skipped as bad pushes nothing); a push of rows no pull holds spends
  // them all. Sync: the worker's last pull, which a push never spends.
  // The claim is where the pull found each pushed key's row.
  caf::expected<std::vector<row_ref>> claim(const push_msg& m);
  // A push sent again after a failover: its pull may have died with the
  // lost primary, so its keys are found (or made) here afresh.
  caf::expected<std::vector<row_ref>> claim_resent(const push_msg& m);

  // Async, ssp: the push's rows written through its claim, no key looked up twice.
  void apply(const push_msg& m, const std::vector<row_ref>& claimed, update_moment at);
  void add_to_round(push_msg& m);                   // sync: kept until the round completes
  void apply_round(update_moment at);               // sync: the mean per row, then a new round
  void drop_round() { round_.clear(); }             // sync: a failover voids the round in progress

  row_part snapshot() const;
  std::uint64_t rows_held() const { return table_.rows_held(); }

 private:
  // What a pull asked for and where it found each key's row.
  struct pull_record {
    std::vector<std::uint64_t> keys;
    std::vector<row_ref> rows;
  };

  caf::error check_keys(const key_list& keys, const char* what) const;
  void remember(std::uint32_t worker, const std::vector<std::uint64_t>& keys,
                std::vector<row_ref> rows);
  std::optional<std::vector<row_ref>> spend_pull(const push_msg& m);

  // A pipelined ssp worker pulls the next batch's rows before it pushes the
  // gradient of the batch in hand: two pulls per worker are outstanding at
  // most, and an older one is forgotten (async keeps the same record; its
  // push comes before the next pull). Sync prefetches nothing: one.
  std::size_t pulls_kept_;
  bool pushes_spend_;

  row_tables table_;
  row_range owned_;
  // Per worker, its pulls not pushed yet, oldest first.
  std::map<std::uint32_t, std::deque<pull_record>> pulled_;
  std::vector<keyed_rows> round_;
};

}  // namespace downpour
