// The parameter side of a worker: pull replies assembled into the model it
// computes on, and the replay of its own update (async/ssp between nodes).
#include <algorithm>

#include "actors/worker_state.hpp"
#include "model/update.hpp"

namespace downpour {
namespace {

// True if the reply's parts sit in a model-sized buffer at the shard's own
// offsets, so the buffer can be read as the model.
bool in_place(const shared_tensor& reply, const shard_layout& layout, std::size_t n) {
  if (!reply.buffer || reply.buffer->size() != n) return false;
  if (reply.parts.empty()) return covers_whole(layout, n);
  if (reply.parts.size() != layout.ranges.size()) return false;
  for (std::size_t i = 0; i < reply.parts.size(); ++i)
    if (reply.parts[i].offset != layout.ranges[i].offset ||
        reply.parts[i].size != layout.ranges[i].size)
      return false;
  return true;
}

// The buffer every reply shares in place, or nullptr.
std::shared_ptr<floats> common_buffer(const worker_state& st) {
  const std::size_t n = st.cfg.model_size;
  for (std::size_t k = 0; k < st.replies.size(); ++k)
    if (st.replies[k].buffer != st.replies[0].buffer ||
        !in_place(st.replies[k], st.cfg.layouts[k], n))
      return nullptr;
  return st.replies[0].buffer;
}

}  // namespace

bool replays_own_updates(const worker_config& cfg, const caf::node_id& here) {
  if (cfg.mode == train_mode::sync || cfg.wire != wire_dtype::fp32 || has_rows(cfg) ||
      !cfg.dense_sgd_only)
    return false;
  return std::all_of(cfg.shards.begin(), cfg.shards.end(),
                     [&](const shard_link& s) { return s->node() != here; });
}

caf::error take_reply(worker_state& st, std::size_t k, pull_reply& r) {
  if (r.replayed) {
    if (!st.offer || r.step != st.offer->base + 1)
      return caf::make_error(errc::unoffered_replay, "a replay that was not offered");
    st.replies[k] = shared_tensor{st.replayed, st.cfg.layouts[k].ranges};
  } else if (r.params.size() != st.cfg.layouts[k].size()) {
    return caf::make_error(errc::shape_mismatch, "shard " + std::to_string(k) + " replied with " +
                                                     std::to_string(r.params.size()) + " floats");
  } else {
    st.replies[k] = std::move(r.params);
  }
  st.pulled_at[k] = r.step;
  return caf::none;
}

// Read the replies in place if one buffer holds them all, else copy each
// shard's part into its ranges of `assembled`.
void settle_params(worker_state& st) {
  if (auto buffer = common_buffer(st)) {
    st.params = std::move(buffer);
  } else {
    if (!st.assembled) st.assembled = std::make_shared<floats>(st.cfg.model_size);
    for (std::size_t k = 0; k < st.replies.size(); ++k) {
      const auto& part = st.replies[k];
      const float* p = part.contiguous();
      scatter(st.cfg.layouts[k], p ? p : part.values().data(), st.assembled->data());
    }
    st.params = st.assembled;
  }
  for (auto& r : st.replies) r = {};
}

// Between nodes (async/ssp, exact floats on the wire), a worker applies its
// gradient to the parameters it last pulled as the shard will (the same
// arithmetic, the learning rate of their step) and offers that with its next
// pull: when no other update came between, the shard answers without the
// parameters, sparing the transfer of the whole model. Pipelined, the
// parameters last pulled are the prefetched ones, not those computed on.
void apply_own_update(worker_state& st) {
  st.offer.reset();
  const auto base = st.pulled_at.front();
  for (auto step : st.pulled_at)
    if (step != base) return;
  const float lr = learning_rate_at(st.cfg.schedule, base);
  const std::size_t n = st.grad->size();
  st.replayed = st.buffers.take(n);
  sgd_into(st.replayed->data(), st.params->data(), st.grad->data(), n, lr);
  st.offer = replay_offer{st.cfg.index, base, float_bits(lr)};
}

// A shard that owns no dense floats (round-robin placement, or a sparse
// model's small dense part) gets none: no parts would mean the whole buffer.
shared_tensor outgoing_part(const worker_state& st, std::size_t k) {
  const auto& ranges = st.cfg.layouts[k].ranges;
  if (st.cfg.layouts[k].size() == 0) return shared_tensor{floats{}, st.cfg.wire};
  return shared_tensor{st.grad, ranges, st.cfg.wire};
}

void record_batch(worker_state& st) {
  const auto stamp = *std::min_element(st.computed_at.begin(), st.computed_at.end());
  if (st.record->write(stamp, *st.current)) return;
  st.cfg.log.error("cannot write " + st.record->path() + "; no more batches recorded");
  st.record.reset();
}

}  // namespace downpour
