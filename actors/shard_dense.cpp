// The dense variables' own rules in the shard's updates: the SGD kernel
// writes every value's new parameter over the gradient (and checks it),
// then each segment of a variable with a rule of its own is written again
// by its rule, from the gradient saved before and the current parameters.
#include <stdexcept>
#include <utility>

#include "actors/shard_state.hpp"

namespace downpour {

floats segment_gradients(const parameter_shard_state& st, const shared_tensor& grad,
                         std::size_t count) {
  if (st.dense.plain()) return {};
  floats out(st.dense.values());
  std::size_t at = 0;
  for (const auto& seg : st.dense.segments()) {
    read_range(grad, seg.local, seg.size, out.data() + at);
    at += seg.size;
  }
  if (count > 1) {
    // The mean as mean_sgd_into takes it: the sum times 1 / count.
    const float inv = 1.0f / static_cast<float>(count);
    for (auto& g : out) g *= inv;
  }
  return out;
}

void apply_segments(parameter_shard_state& st, shared_tensor& next, const floats& grads,
                    update_moment at) {
  if (st.dense.plain()) return;
  floats w;
  std::size_t g = 0;
  for (std::size_t s = 0; s < st.dense.segments().size(); ++s) {
    const auto& seg = st.dense.segments()[s];
    w.resize(seg.size);
    read_range(st.params, seg.local, seg.size, w.data());
    st.dense.apply(s, w.data(), grads.data() + g, at);
    write_range(next, seg.local, seg.size, w.data());
    g += seg.size;
  }
}

caf::error take_dense(parameter_shard_state& st, const shard_init& init) {
  dense_rules rules(st.cfg.dense, init.ranges);
  if (!init.slots.values.empty()) {
    try {
      const auto& v = init.slots.values;
      rules.set_slots(std::vector<float>(v.begin(), v.end()));
    } catch (const std::invalid_argument& e) {
      return caf::make_error(errc::shape_mismatch, e.what());
    }
  }
  st.dense = std::move(rules);
  return caf::none;
}

}  // namespace downpour
