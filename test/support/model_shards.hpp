// A model held by real parameter shards on CAF's deterministic scheduler,
// placed and initialised as the chief does it (runtime/node/restore.cpp): the
// fixture of the actor tests of the shards' readers, the checkpoint saver and
// the evaluator. Each push applies a gradient of 1 at learning rate 0.5, so a
// parameter drops by exactly 0.5 per step and a test can name every value.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "deterministic_fixture.hpp"
#include "model/layout.hpp"
#include "model/row_tables.hpp"
#include "model/update.hpp"
#include "protocol/placement.hpp"
#include "reporting/log.hpp"

namespace downpour::testing {

// What the shards start with: the flat buffers and the rows held, keys ascending.
struct model_values {
  std::vector<float> params, ema;
  row_dump rows;
  std::int64_t step = 0;
};

// The same values after n more steps of the shards' arithmetic: each step
// lowers every parameter by 0.5 and moves the moving averages toward them.
inline model_values after_steps(model_values m, int n) {
  for (int i = 0; i < n; ++i, ++m.step) {
    for (float& p : m.params) p -= 0.5f;
    update_ema(m.ema.data(), m.params.data(), m.ema.size(), ema_decay_at(0.99f, m.step));
  }
  return m;
}

// A request's answer or its error, once either came.
template <class T>
struct answer_slot {
  std::optional<T> value;
  caf::error error;
  bool answered() const { return value.has_value() || error; }
};

struct model_shards_fixture : deterministic_fixture {
  std::vector<shard_actor> shards;
  std::vector<shard_init> inits;
  std::vector<std::int64_t> steps;  // each shard's step, as pushed
  // Spawned by the test besides the shards (and the askers): ended with them.
  std::vector<caf::actor> others;
  std::FILE* out = std::tmpfile();  // what the actors under test log
  std::FILE* err = std::tmpfile();

  ~model_shards_fixture() {
    for (auto& s : shards) (*chief)->send(s, stop_atom_v);
    for (auto& a : others) (*chief)->send_exit(a, caf::exit_reason::user_shutdown);
    run();
    std::fclose(out);
    std::fclose(err);
  }

  logger test_log() const { return logger{"worker:0", log_level::info, out, err}; }

  // The records logged so far.
  std::vector<log_record> logged() const {
    std::string text;
    for (std::FILE* f : {out, err}) {
      std::fflush(f);
      std::rewind(f);
      char buf[4096];
      for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
    }
    return parse_log(text);
  }

  // n shards holding m as placed by kind; a sparse variable's rows split by row range.
  void place(const model_layout& layout, std::size_t n, placement_kind kind, const model_values& m,
             update_rule optimizer = update_rule::sgd) {
    const auto layouts = partition(layout, n, kind);
    for (std::size_t k = 0; k < n; ++k) {
      shard_config c;
      c.index = static_cast<std::uint32_t>(k);
      c.last_step = 1'000'000;
      c.schedule = lr_schedule{0.5f, 1.0f, 1000, false};
      c.rows = row_tables_of(layout, 0);
      for (auto& t : c.rows.tables) t.update.rule = optimizer;
      c.log = test_log();
      shard_init init;
      for (const auto& r : layouts[k].ranges)
        init.ranges.insert(init.ranges.end(), {r.offset, r.size});
      init.step = m.step;
      init.params.values = to_floats(gather(layouts[k], m.params.data()));
      init.ema.values = to_floats(gather(layouts[k], m.ema.data()));
      if (const auto& v = only_row_variable(layout)) init.rows = rows_of(m.rows, v->rows, n, k);
      shards.push_back(spawn_parameter_shard(*sys, c));
      inits.push_back(init);
      steps.push_back(m.step);
      (*chief)->send(shards.back(), init_atom_v, std::move(init));
    }
    run();
  }

  // One push to shard k, stamped with its step; with rows, a pull of none first.
  void push(std::size_t k) {
    const auto size = inits[k].params.values.size();
    if (inits[k].rows.last > inits[k].rows.first)
      (*chief)->send(shards[k], pull_atom_v, row_pull{0, 0, key_list{}});
    (*chief)->send(shards[k], push_atom_v,
                   push_msg{steps[k]++, 0, shared_tensor{std::vector<float>(size, 1.0f)}});
    run();
  }

  void push_all(std::size_t times = 1) {
    for (std::size_t i = 0; i < times; ++i)
      for (std::size_t k = 0; k < shards.size(); ++k) push(k);
  }

  // Sends a request from a helper; the answer or error lands in the slot
  // when it comes (now, or in a later run()).
  template <class T, class Handle, class... Ts>
  std::shared_ptr<answer_slot<T>> answer(const Handle& h, Ts... xs) {
    auto slot = std::make_shared<answer_slot<T>>();
    others.push_back(sys->spawn([=](caf::event_based_actor* self) {
      self->request(h, caf::infinite, xs...)
          .then([=](T& x) { slot->value = std::move(x); },
                [=](caf::error& e) { slot->error = std::move(e); });
    }));
    run();
    return slot;
  }

  // Runs until nothing is left to do; an actor that keeps sending (a retry
  // without end) fails the test instead of hanging it.
  void settle() {
    constexpr std::size_t bound = 100'000;
    REQUIRE_MESSAGE(sched->run(bound) < bound, "the actors never went quiet");
  }

 private:
  static row_part rows_of(const row_dump& all, std::uint64_t n, std::size_t shards, std::size_t k) {
    const auto range = rows_of_shard(n, shards, k);
    row_part part;
    part.first = range.first;
    part.last = range.last;
    const std::size_t dim = all.keys.empty() ? 0 : all.values.size() / all.keys.size();
    const std::size_t acc = all.keys.empty() ? 0 : all.accumulators.size() / all.keys.size();
    for (std::size_t i = 0; i < all.keys.size(); ++i) {
      if (all.keys[i] < range.first || all.keys[i] >= range.last) continue;
      part.keys.keys.push_back(all.keys[i]);
      part.values.values.insert(part.values.values.end(), all.values.begin() + i * dim,
                                all.values.begin() + (i + 1) * dim);
      part.accumulators.values.insert(part.accumulators.values.end(),
                                      all.accumulators.begin() + i * acc,
                                      all.accumulators.begin() + (i + 1) * acc);
    }
    return part;
  }
};

}  // namespace downpour::testing
