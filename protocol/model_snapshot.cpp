#include "protocol/model_snapshot.hpp"

#include <algorithm>
#include <memory>
#include <utility>

#include "data/streamed_input.hpp"
#include "protocol/placement.hpp"
#include "protocol/row_pages.hpp"

namespace downpour {

namespace {

// A snapshot's (or a checkpoint's) rows as a row source; a row never pushed
// reads as its initial value.
row_source rows_from(const row_dump& rows, const row_tables_spec& spec) {
  auto table = std::make_shared<row_tables>(spec);
  table->load(rows);
  return [table](const std::vector<std::uint64_t>& keys) { return table->pull(keys); };
}

}  // namespace

raw_and_ema evaluate_both(const model& m, const float* params, const float* ema,
                          const row_dump& rows, const row_tables_spec& spec,
                          const dataset& set) {
  if (spec.empty()) return {evaluate(m, params, set), evaluate(m, ema, set)};
  const row_source source = rows_from(rows, spec);
  return {evaluate(m, params, source, set), evaluate(m, ema, source, set)};
}

raw_and_ema evaluate_test(const model& m, const float* params, const float* ema,
                          const row_dump& rows, const row_tables_spec& spec,
                          const data_splits& data) {
  if (!data.stream) return evaluate_both(m, params, ema, rows, spec, *data.test);
  constexpr std::size_t chunk = 1000;
  auto batches = test_batches(*data.stream, chunk);
  std::optional<row_source> source;
  if (!spec.empty()) source = rows_from(rows, spec);
  auto reports = evaluate_each(m, {params, ema}, source ? &*source : nullptr, *batches, chunk);
  return {reports[0], reports[1]};
}

namespace snapshot_detail {
namespace {

// The shards' rows, in row order: their ranges do not overlap.
row_dump merge_rows(std::vector<row_part>& parts) {
  std::sort(parts.begin(), parts.end(),
            [](const row_part& a, const row_part& b) { return a.first < b.first; });
  row_dump all;
  for (auto& p : parts) {
    all.keys.insert(all.keys.end(), p.keys.keys.begin(), p.keys.keys.end());
    all.values.insert(all.values.end(), p.values.values.begin(), p.values.values.end());
    all.accumulators.insert(all.accumulators.end(), p.accumulators.values.begin(),
                            p.accumulators.values.end());
  }
  return all;
}

}  // namespace

assembly::assembly(std::size_t model_size, std::size_t shards, snapshot_done done)
    : missing_(shards), done_(std::move(done)) {
  model_.params.resize(model_size);
  model_.ema.resize(model_size);
  if (missing_ == 0) std::exchange(done_, {})(std::move(model_));
}

void assembly::add(shard_snapshot& part) {
  if (!done_) return;
  const auto layout = layout_from_pairs(part.ranges);
  scatter(layout, part.params.values.data(), model_.params.data());
  scatter(layout, part.ema.values.data(), model_.ema.data());
  model_.step = part.step;
  model_.dropped += part.dropped;
  model_.replayed += part.replayed;
  if (part.rows.keys.size() > 0 || part.rows.last > part.rows.first)
    row_parts_.push_back(std::move(part.rows));
  const auto& slots = part.slots.values;
  model_.slot_parts.push_back({part.ranges, std::vector<float>(slots.begin(), slots.end())});
  for (const auto& p : part.positions) merge_position(model_.positions, p.worker, p.at);
  if (--missing_ > 0) return;
  model_.rows = merge_rows(row_parts_);
  std::exchange(done_, {})(std::move(model_));
}

void assembly::append(shard_snapshot& part, row_part& page) {
  if (!done_) return;
  if (auto err = append_page(part.rows, page)) fail(std::move(err));
}

void assembly::fail(caf::error err) {
  if (done_) std::exchange(done_, {})(std::move(err));
}

}  // namespace snapshot_detail
}  // namespace downpour
