#include "actors/checkpoint_saver.hpp"

#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <memory>

#include "protocol/failure.hpp"
#include "protocol/metered_config.hpp"
#include "protocol/model_snapshot.hpp"
#include "config/durations.hpp"
#include "model/update.hpp"

namespace downpour {
namespace {

using clock_type = std::chrono::steady_clock;

struct checkpoint_saver_state {
  saver_config cfg;
  std::int64_t last_saved = -1;
  std::string last_path;
  double last_time = 0.0;  // unix seconds
  static inline const char* name = "checkpoint_saver";
};

using saver_pointer = saver_actor::stateful_pointer<checkpoint_saver_state>;

// One save: the checkpoint being assembled and who waits for it.
struct gathering {
  checkpoint ckpt;
  clock_type::time_point asked = clock_type::now();
  caf::typed_response_promise<std::string> promise;
};

double ms_since(clock_type::time_point t) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t).count();
}

// What /metrics says of saves (none in a test's actor system): a failure
// counted, or the newest success's time, duration and size.
checkpoint_meter* meter_of(saver_pointer self) {
  auto* meters = meters_of(self->system());
  return meters ? &meters->checkpoint() : nullptr;
}

void count_failure(saver_pointer self) {
  if (auto* m = meter_of(self)) m->failures.fetch_add(1, std::memory_order_relaxed);
}

void count_success(saver_pointer self, const gathering& g, const std::string& path) {
  auto* m = meter_of(self);
  if (!m) return;
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(path, ec);
  m->saves.fetch_add(1, std::memory_order_relaxed);
  m->last_duration_seconds.set(ms_since(g.asked) / 1000.0);
  m->last_size_bytes.store(ec ? 0 : bytes, std::memory_order_relaxed);
  m->last_success_unix_seconds.set(g.ckpt.wall_time);
}

// A diverged model is never saved over the good checkpoints before it.
bool finite_model(const checkpoint& c) {
  return all_finite(c.params.data(), c.params.size()) && all_finite(c.ema.data(), c.ema.size()) &&
         all_finite(c.rows.values.data(), c.rows.values.size());
}

void write_out(saver_pointer self, gathering& g) {
  auto& st = self->state;
  if (!finite_model(g.ckpt)) {
    const auto why = "checkpoint: not saved at global step " + std::to_string(g.ckpt.global_step) +
                     ": the parameters are not finite (the job diverged); the checkpoints "
                     "saved before are kept";
    st.cfg.log.error(why);
    count_failure(self);
    g.promise.deliver(caf::make_error(errc::diverged, why));
    return;
  }
  double snapshot_ms = ms_since(g.asked);
  auto wrote = clock_type::now();
  try {
    auto path = st.cfg.write(g.ckpt);
    st.last_saved = std::max(st.last_saved, g.ckpt.global_step);
    st.last_path = path;
    st.last_time = g.ckpt.wall_time;
    char times[96];
    std::snprintf(times, sizeof times, " (shards answered in %.1f ms, written in %.1f ms)",
                  snapshot_ms, ms_since(wrote));
    st.cfg.log.info("checkpoint: saved " + path + times);
    count_success(self, g, path);
    g.promise.deliver(path);
  } catch (const std::exception& e) {
    // Of any kind: one let through would end the saver with the asker never
    // answered. Training goes on; the next save may succeed.
    st.cfg.log.error(e.what());
    count_failure(self);
    g.promise.deliver(caf::make_error(errc::save_failed, e.what()));
  }
}

// A save of a step some shard has already passed is no failure of the job:
// a timed save targets a step a little past shard 0, which another shard
// may have passed (async), and a restore can jump over a save's step. It is
// logged at passed_level (a timed save: INFO, the next tick tries again;
// others: WARN); any other failure at ERROR.
log_level failure_level(const caf::error& err, log_level passed_level) {
  return err == errc::step_passed ? passed_level : log_level::error;
}

// Asks every shard for its state right after step (a shard not there yet
// answers when it gets there) and writes the checkpoint once all have answered.
caf::typed_response_promise<std::string> save_at(saver_pointer self, std::int64_t step,
                                                 caf::timespan timeout, log_level passed_level) {
  auto& st = self->state;
  auto g = std::make_shared<gathering>();
  g->promise = self->make_response_promise<std::string>();
  g->ckpt.layout = st.cfg.layout;
  g->ckpt.global_step = step;
  g->ckpt.mode = st.cfg.mode;
  g->ckpt.wall_time = std::chrono::duration<double>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  gather_snapshot(self, st.cfg.shards, st.cfg.layout.size(), step, timeout,
                  [=](caf::expected<model_snapshot> model) {
                    if (!model) {
                      self->state.cfg.log.write(
                          failure_level(model.error(), passed_level),
                          "checkpoint: no checkpoint at step " + std::to_string(step) + ": " +
                              self->system().render(model.error()));
                      // A passed step is tried again further on, not a failed save.
                      if (model.error() != errc::step_passed) count_failure(self);
                      g->promise.deliver(model.error());
                      return;
                    }
                    g->ckpt.params = std::move(model->params);
                    g->ckpt.ema = std::move(model->ema);
                    g->ckpt.rows = std::move(model->rows);
                    g->ckpt.positions = std::move(model->positions);
                    g->ckpt.slots = whole_slots(self->state.cfg.layout.variables(),
                                                model->slot_parts);
                    write_out(self, *g);
                  });
  return g->promise;
}

// A timed save targets a step a little past where shard 0 stands: in async
// mode the shards' counts differ by the pushes in flight, and every shard must
// still be before the target when asked.
constexpr std::int64_t timed_save_margin = 8;

void save_soon(saver_pointer self) {
  auto& st = self->state;
  self->request(st.cfg.shards[0], std::chrono::minutes(1), await_atom_v, std::int64_t{0})
      .then(
          [=](std::int64_t now) {
            auto target = std::min(now + timed_save_margin, self->state.cfg.last_step);
            if (target > self->state.last_saved)
              save_at(self, target, std::chrono::minutes(5), log_level::info);
          },
          [](caf::error&) {});
}

void schedule_tick(saver_pointer self) {
  auto secs = self->state.cfg.every_secs;
  if (secs > 0)
    self->delayed_send(self, timespan_of(secs), tick_atom_v);
}

// Step-count checkpoints: the snapshot request for the next multiple waits
// at the shards until each reaches it (event-driven, exact in every mode).
void watch_steps(saver_pointer self, std::int64_t from) {
  auto& st = self->state;
  if (st.cfg.every_steps <= 0) return;
  auto next = (from / st.cfg.every_steps + 1) * st.cfg.every_steps;
  if (next >= st.cfg.last_step) return;  // the final save covers it
  save_at(self, next, std::chrono::hours(24 * 365), log_level::warn);  // as long as the job runs
  self->request(st.cfg.shards[0], caf::infinite, await_atom_v, next)
      .then([=](std::int64_t) { watch_steps(self, next); }, [](caf::error&) {});
}

saver_actor::behavior_type checkpoint_saver(saver_pointer self, saver_config cfg) {
  end_on_exception(self);
  self->state.cfg = std::move(cfg);
  schedule_tick(self);
  watch_steps(self, self->state.cfg.start_step);
  return {
    [=](save_atom, std::int64_t step) -> caf::result<std::string> {
      return save_at(self, step, std::chrono::minutes(5), log_level::warn);
    },
    [=](tick_atom) {
      save_soon(self);
      schedule_tick(self);
    },
    [=](stats_atom) -> caf::result<std::string, double> {
      return {self->state.last_path, self->state.last_time};
    },
  };
}

}  // namespace

saver_actor spawn_checkpoint_saver(caf::actor_system& sys, saver_config cfg) {
  return sys.spawn(checkpoint_saver, std::move(cfg));
}

}  // namespace downpour
