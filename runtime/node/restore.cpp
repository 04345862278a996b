#include "runtime/node/restore.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "reporting/log.hpp"
#include "protocol/placement.hpp"
#include "protocol/row_pages.hpp"
#include "config/durations.hpp"
#include "model/dense_rules.hpp"
#include "model/init.hpp"
#include "runtime/files/checkpoint.hpp"
#include "runtime/net/connect.hpp"
#include "runtime/node/hello.hpp"

namespace downpour {
namespace {

// Shard k's rows of the model's key space: the held ones in its range, each
// key with its variable's width of values and slots (held has all or none).
row_part rows_for_shard(const row_dump& held, const row_tables_spec& spec, std::size_t shards,
                        std::size_t k) {
  const auto range = rows_of_shard(spec.keys(), shards, k);
  const std::uint64_t* keys = held.keys.data();
  const std::uint64_t* end = keys + held.keys.size();
  const std::uint64_t* a = std::lower_bound(keys, end, range.first);
  const std::uint64_t* b = std::lower_bound(a, end, range.last);
  const auto va = static_cast<std::ptrdiff_t>(spec.values_for(keys, a));
  const auto vb = va + static_cast<std::ptrdiff_t>(spec.values_for(a, b));
  row_part part;
  part.first = range.first;
  part.last = range.last;
  part.keys = key_list{std::vector<std::uint64_t>(a, b)};
  part.values = tensor{floats(held.values.begin() + va, held.values.begin() + vb)};
  if (!held.accumulators.empty()) {
    const auto sa = static_cast<std::ptrdiff_t>(spec.slots_for(keys, a));
    const auto sb = sa + static_cast<std::ptrdiff_t>(spec.slots_for(a, b));
    part.accumulators = tensor{floats(held.accumulators.begin() + sa, held.accumulators.begin() + sb)};
  }
  return part;
}

shard_init make_init(const model_layout& model, const std::vector<shard_layout>& layouts,
                     std::size_t k, const start_state& start) {
  const auto& layout = layouts[k];
  shard_init init;
  const row_tables_spec rows = row_tables_of(model, 0);
  if (!rows.empty()) init.rows = rows_for_shard(start.rows, rows, layouts.size(), k);
  for (const auto& r : layout.ranges) {
    init.ranges.push_back(r.offset);
    init.ranges.push_back(r.size);
  }
  init.step = start.step;
  init.positions = start.positions;
  init.params.values.resize(layout.size());
  init.ema.values.resize(layout.size());
  gather_into(layout, start.params.data(), init.params.values.data());
  gather_into(layout, start.ema.data(), init.ema.values.data());
  // Split by variable: the checkpoint's slots fit any placement.
  if (!start.slots.empty())
    init.slots = tensor{shard_slots(model.variables(), init.ranges, start.slots)};
  return init;
}

// Refuses a ps started with other settings: it is told to exit (it then
// names the difference itself) and the chief waits until it is gone.
void refuse_ps(caf::scoped_actor& self, const shard_actor& ps, const caf::error& why,
               const deadline& until) {
  self->monitor(ps);
  self->send_exit(ps, why);
  self->receive([](caf::down_msg&) {}, caf::after(until.left()) >> [] {});
}

// A lost ps, started again on its port with this job's settings: a fresh
// handle to it. One started with other settings is refused alone and the
// wait goes on for a correct one.
caf::expected<shard_actor> reconnect_ps(caf::actor_system& sys, const options& opts,
                                        const model_layout& layout, std::size_t k) {
  const auto began = std::chrono::steady_clock::now();
  const auto until = deadline::in_seconds(opts.connect_timeout_s);
  const auto what = "ps " + std::to_string(k);
  const auto where = what + " at " + to_string(opts.ps_hosts[k]);
  const logger log = node_logger(opts, role_kind::worker, 0);
  log.warn("chief: " + what + " is gone; waiting up to " + seconds_text(opts.connect_timeout_s) +
           " for it to be started again");
  caf::scoped_actor self{sys};
  for (;;) {
    auto h = connect_live_until<shard_actor>(sys, opts, opts.ps_hosts[k], what, until);
    if (!h)
      return make_node_error(errc::unreachable,
                             where + " did not come back within " +
                                 seconds_text(opts.connect_timeout_s) +
                                 "; the job stops (no checkpoint saved since it went down)");
    // Right after a refused ps exits, the middleman can still hand out its
    // dead handle, which never answers: a bounded hello, then connect again.
    auto refused = hello_shard(self, opts, layout, *h, k,
                               std::min(until.left(), caf::timespan{std::chrono::seconds(5)}));
    if ((refused == caf::sec::request_timeout || refused == caf::sec::request_receiver_down) &&
        !until.passed())
      continue;
    if (!refused) {
      log.info("chief: " + what + " is back after " + fixed_text(seconds_since(began), 3) + " s");
      return h;
    }
    if (refused != errc::config_mismatch) return refused;
    log.warn("chief: " + where + " was started with other settings (" + describe(refused) +
             "); refused it, still waiting for one with this job's settings");
    refuse_ps(self, *h, refused, until);
  }
}

}  // namespace

start_state restore_or_init(const options& opts, const model_layout& layout, const logger& log) {
  log_stream warnings{log, log_level::warn};
  if (auto found = find_newest_checkpoint(opts.checkpoint_dir, warnings)) {
    check_layout(found->data, layout, found->path);
    log.info("checkpoint: restored " + found->path + " at global step " +
             std::to_string(found->data.global_step));
    start_state restored;
    restored.step = found->data.global_step;
    restored.params = std::move(found->data.params);
    restored.ema = std::move(found->data.ema);
    restored.rows = std::move(found->data.rows);
    restored.restored = true;
    restored.positions = std::move(found->data.positions);
    restored.slots = std::move(found->data.slots);
    return restored;
  }
  start_state fresh;
  fresh.params = initial_parameters(layout, opts.seed);
  fresh.ema = fresh.params;  // shadows start at the initial values
  return fresh;
}

// Sends all but the last page of init's rows ahead of it (the shard stages
// them); init keeps the last page.
caf::error stage_pages(caf::scoped_actor& self, const shard_actor& shard, caf::timespan timeout,
                       const model_layout& layout, shard_init& init) {
  const row_tables_spec rows = row_tables_of(layout, 0);
  if (rows.empty()) return caf::none;
  const std::uint64_t page_rows = rows_per_page(rows);
  const std::uint64_t pages = page_count(init.rows.keys.size(), page_rows);
  if (pages <= 1) return caf::none;
  caf::error failure;
  for (std::uint64_t page = 0; page + 1 < pages && !failure; ++page)
    self->request(shard, timeout, init_atom_v, page_of(init.rows, page, page_rows, rows))
        .receive([](std::uint64_t) {}, [&](caf::error& err) { failure = std::move(err); });
  init.rows = page_of(init.rows, pages - 1, page_rows, rows);
  return failure;
}

caf::expected<std::int64_t> restore_shards(caf::actor_system& sys, const options& opts,
                                           const model_layout& layout, const start_state& start,
                                           const std::vector<shard_actor>& shards) {
  caf::scoped_actor self{sys};
  auto layouts = partition(layout, shards.size(), opts.placement);
  std::int64_t step = -1;
  caf::error failure;
  for (std::size_t k = 0; k < shards.size() && !failure; ++k) {
    const auto timeout = timespan_of(opts.connect_timeout_s);
    auto init = make_init(layout, layouts, k, start);
    if ((failure = stage_pages(self, shards[k], timeout, layout, init))) break;
    self->request(shards[k], timeout, restore_atom_v, std::move(init))
        .receive(
            [&](std::int64_t s) {
              if (step >= 0 && s != step)
                failure =
                    make_node_error(errc::config_mismatch, "shards stand at different steps (" +
                                                               std::to_string(step) + " and " +
                                                               std::to_string(s) + ")");
              step = s;
            },
            [&](caf::error& err) { failure = std::move(err); });
  }
  if (failure) return failure;
  return step;
}

caf::expected<recovered_cluster> recover_cluster(caf::actor_system& sys, const options& opts,
                                                 const model_layout& layout,
                                                 std::vector<shard_actor> shards) {
  const auto began = std::chrono::steady_clock::now();
  // Another ps may be found lost only while we wait for the first: greet
  // them all again after each round of reconnecting.
  for (;;) {
    for (std::size_t k = 0; k < shards.size(); ++k) {
      if (!is_gone(sys, shards[k])) continue;
      auto h = reconnect_ps(sys, opts, layout, k);
      if (!h) return h.error();
      shards[k] = std::move(*h);
    }
    auto greeted = check_peers(sys, opts, layout, shards, timespan_of(opts.connect_timeout_s));
    if (!greeted) break;
    if (greeted != caf::sec::request_receiver_down) return greeted;
  }
  const logger log = node_logger(opts, role_kind::worker, 0);
  auto step = restore_shards(sys, opts, layout, restore_or_init(opts, layout, log), shards);
  if (!step) return step.error();
  log.info("chief: recovered in " + fixed_text(seconds_since(began), 3) +
           " s; every shard is at global step " + std::to_string(*step));
  return recovered_cluster{std::move(shards), *step};
}

}  // namespace downpour
