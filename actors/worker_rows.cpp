// The sparse side of a worker: a batch names the rows it touches, each
// shard is asked for its range of them and gets back their gradient. The
// shards own contiguous row ranges in shard order, so each one's keys are
// a contiguous run of the batch's sorted keys (ps-lite's range slicer).
#include <algorithm>

#include "actors/worker_state.hpp"

namespace downpour {

void cut_rows(worker_state& st) {
  st.keys = st.workspace->touched_rows(*st.current);
  const auto& bounds = st.cfg.row_bounds;
  st.key_cuts.assign(bounds.size(), 0);
  for (std::size_t k = 0; k < bounds.size(); ++k)
    st.key_cuts[k] = static_cast<std::size_t>(
        std::lower_bound(st.keys.begin(), st.keys.end(), bounds[k]) - st.keys.begin());
  st.key_cuts.back() = st.keys.size();
  st.rows.resize(st.keys.size() * st.cfg.row_cols);
  st.row_grad.resize(st.rows.size());
}

row_pull row_pull_for(const worker_state& st, std::size_t k, std::int64_t min_step) {
  const auto first = st.keys.begin() + static_cast<std::ptrdiff_t>(st.key_cuts[k]);
  const auto last = st.keys.begin() + static_cast<std::ptrdiff_t>(st.key_cuts[k + 1]);
  return row_pull{min_step, st.cfg.index, key_list{std::vector<std::uint64_t>(first, last)}};
}

caf::error take_rows(worker_state& st, std::size_t k, pull_reply& r) {
  const std::size_t cols = st.cfg.row_cols;
  const std::size_t n = (st.key_cuts[k + 1] - st.key_cuts[k]) * cols;
  if (r.rows.values.size() != n)
    return caf::make_error(errc::shape_mismatch, "shard " + std::to_string(k) + " replied with " +
                                                     std::to_string(r.rows.values.size()) +
                                                     " row values for " + std::to_string(n));
  std::copy(r.rows.values.begin(), r.rows.values.end(),
            st.rows.begin() + static_cast<std::ptrdiff_t>(st.key_cuts[k] * cols));
  return caf::none;
}

void add_outgoing_rows(const worker_state& st, std::size_t k, push_msg& m) {
  const std::size_t cols = st.cfg.row_cols;
  const auto a = static_cast<std::ptrdiff_t>(st.key_cuts[k]);
  const auto b = static_cast<std::ptrdiff_t>(st.key_cuts[k + 1]);
  m.keys = key_list{std::vector<std::uint64_t>(st.keys.begin() + a, st.keys.begin() + b)};
  m.rows = tensor{floats(st.row_grad.begin() + a * static_cast<std::ptrdiff_t>(cols),
                         st.row_grad.begin() + b * static_cast<std::ptrdiff_t>(cols)),
                  st.cfg.wire};
}

}  // namespace downpour
