// The shard's answer to a stats request: what `downpour status` and a ps's
// /metrics show of it, with the rates of rows it serves.
#include "actors/shard_state.hpp"

namespace downpour {
namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The meter's counts (none without one: a test's actor system).
std::pair<std::uint64_t, std::uint64_t> rows_counted(const parameter_shard_state& st) {
  if (!st.meter) return {0, 0};
  return {st.meter->rows_pulled.load(std::memory_order_relaxed),
          st.meter->rows_pushed.load(std::memory_order_relaxed)};
}

}  // namespace

void start_key_rates(parameter_shard_state& st) {
  const double now = now_s();
  const auto [pulled, pushed] = rows_counted(st);
  st.pulled_rate.start(now, pulled);
  st.pushed_rate.start(now, pushed);
}

shard_stats stats_of(parameter_shard_state& st) {
  shard_stats s{st.step,     st.ranges,   st.dropped,
                st.rejected, st.replayed, st.rows ? st.rows->rows_held() : 0,
                st.positions};
  const double now = now_s();
  const auto [pulled, pushed] = rows_counted(st);
  s.keys_pulled_per_s = static_cast<std::uint64_t>(st.pulled_rate.take(now, pulled) + 0.5);
  s.keys_pushed_per_s = static_cast<std::uint64_t>(st.pushed_rate.take(now, pushed) + 0.5);
  return s;
}

}  // namespace downpour
