// The worker's part of its node's /metrics (reporting/meters.hpp): steps,
// their durations, and compute, input and waiting seconds.
#include <algorithm>
#include <chrono>

#include "actors/worker_state.hpp"
#include "protocol/metered_config.hpp"

namespace downpour {

void attach_meter(worker_state& st, caf::actor_system& sys) {
  if (auto* meters = meters_of(sys)) st.meter = &meters->worker(st.cfg.index);
}

void meter_step(worker_state& st) {
  const auto now = std::chrono::steady_clock::now();
  if (st.meter && st.local_step > 1) {
    const double step = std::chrono::duration<double>(now - st.last_push).count();
    st.meter->step_seconds.observe(step);
    st.meter->wait_seconds.add(std::max(0.0, step - st.busy_s));
  }
  if (st.meter) st.meter->steps.fetch_add(1, std::memory_order_relaxed);
  st.last_push = now;
  st.busy_s = 0.0;
}

void meter_input(worker_state& st, double seconds) {
  st.busy_s += seconds;
  if (st.meter) st.meter->input_seconds.add(seconds);
}

void meter_compute(worker_state& st, double seconds) {
  st.busy_s += seconds;
  if (st.meter) st.meter->compute_seconds.add(seconds);
}

}  // namespace downpour
