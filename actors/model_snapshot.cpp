#include "actors/model_snapshot.hpp"

#include <utility>

#include "actors/placement.hpp"

namespace downpour::snapshot_detail {

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
  if (--missing_ == 0) std::exchange(done_, {})(std::move(model_));
}

void assembly::fail(caf::error err) {
  if (done_) std::exchange(done_, {})(std::move(err));
}

}  // namespace downpour::snapshot_detail
