// Snapshot and scatter: ask every shard for its part of the model and
// assemble the parts in placement order. The one way the checkpoint saver,
// the evaluator and the chief (the final model) read the whole model.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include "protocol/messages.hpp"
#include "model/dense_rules.hpp"
#include "model/model.hpp"
#include "model/row_tables.hpp"

namespace downpour {

// The whole model as the shards held it.
struct model_snapshot {
  std::int64_t step = 0;      // the last shard's step (the same for all at a given step)
  std::vector<float> params;  // flat, in the model's layout
  std::vector<float> ema;
  std::int64_t dropped = 0;   // summed over the shards
  std::int64_t replayed = 0;
  row_dump rows;  // the sparse variable's rows held, keys ascending (shards in order)
  // Each worker's newest read position any shard holds: a batch some shard
  // has applied is not read again after a resume (docs/input.md).
  std::vector<worker_position> positions;
  // Each shard's dense slots with its ranges (whole_slots puts them together).
  std::vector<dense_slot_part> slot_parts;
};

// evaluate() of the parameters and of their moving averages, with the rows
// (read once for both) when the model has a sparse variable.
struct raw_and_ema {
  accuracy_report raw, ema;
};
raw_and_ema evaluate_both(const model& m, const float* params, const float* ema,
                          const row_dump& rows, const row_tables_spec& spec,
                          const dataset& set);

// The same on the job's test split: the set in memory, or the test files
// streamed once (data.stream).
raw_and_ema evaluate_test(const model& m, const float* params, const float* ema,
                          const row_dump& rows, const row_tables_spec& spec,
                          const data_splits& data);

using snapshot_done = std::function<void(caf::expected<model_snapshot>)>;

namespace snapshot_detail {

// The parts that have come in; done is called once, with the whole model or
// the first failure (answers after a failure are dropped).
class assembly {
 public:
  assembly(std::size_t model_size, std::size_t shards, snapshot_done done);
  void add(shard_snapshot& part);
  // A further page of part's rows; a page that does not follow fails the whole.
  void append(shard_snapshot& part, row_part& page);
  void fail(caf::error err);
  bool finished() const { return !done_; }

 private:
  model_snapshot model_;
  std::vector<row_part> row_parts_;
  std::size_t missing_;
  snapshot_done done_;
};

// The rest of a shard's part: its rows' further pages, one request at a
// time (each bounded by timeout), then the part goes to the assembly.
template <class Self, class Timeout>
void read_pages(Self* self, const shard_actor& shard, const Timeout& timeout,
                const std::shared_ptr<assembly>& parts, std::shared_ptr<shard_snapshot> part,
                std::uint64_t page) {
  constexpr bool blocking = std::is_base_of<caf::blocking_actor, Self>::value;
  for (; page < part->row_pages; ++page) {
    if (parts->finished()) return;
    auto handle = self->request(shard, timeout, snapshot_atom_v, row_page_ask{part->frozen, page});
    auto on_error = [parts](caf::error& err) { parts->fail(std::move(err)); };
    if constexpr (blocking) {
      handle.receive([&](row_part& rows) { parts->append(*part, rows); }, on_error);
    } else {
      handle.then(
          [=](row_part& rows) {
            parts->append(*part, rows);
            read_pages(self, shard, timeout, parts, part, page + 1);
          },
          on_error);
      return;
    }
  }
  parts->add(*part);
}

// One shard's request; a blocking actor (the chief's scoped actor) waits for
// the answer, an event-based one goes on.
template <class Self, class Timeout, class... Step>
void ask_part(Self* self, const shard_actor& shard, const Timeout& timeout,
              const std::shared_ptr<assembly>& parts, Step... step) {
  auto handle = self->request(shard, timeout, snapshot_atom_v, step...);
  auto on_error = [parts](caf::error& err) { parts->fail(std::move(err)); };
  if constexpr (std::is_base_of<caf::blocking_actor, Self>::value) {
    std::shared_ptr<shard_snapshot> got;  // its pages are asked for after this receive
    handle.receive([&](shard_snapshot& part) { got = std::make_shared<shard_snapshot>(std::move(part)); },
                   on_error);
    if (got) read_pages(self, shard, timeout, parts, std::move(got), 1);
  } else {
    handle.then(
        [=](shard_snapshot& part) {
          read_pages(self, shard, timeout, parts, std::make_shared<shard_snapshot>(std::move(part)),
                     1);
        },
        on_error);
  }
}

}  // namespace snapshot_detail

// Asks every shard for its part, right after step (a shard not there yet
// answers when it gets there) or, without a step, as it stands, and calls
// done once with the assembled model or the first failure. Timeout bounds
// each shard's answer (a std::chrono duration or caf::infinite).
template <class Self, class Timeout>
void gather_snapshot(Self* self, const std::vector<shard_actor>& shards, std::size_t model_size,
                     std::optional<std::int64_t> step, const Timeout& timeout,
                     snapshot_done done) {
  auto parts =
      std::make_shared<snapshot_detail::assembly>(model_size, shards.size(), std::move(done));
  for (const auto& shard : shards) {
    if (parts->finished()) return;
    if (step)
      snapshot_detail::ask_part(self, shard, timeout, parts, *step);
    else
      snapshot_detail::ask_part(self, shard, timeout, parts);
  }
}

}  // namespace downpour
