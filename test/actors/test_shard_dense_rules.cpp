// A parameter shard updates each dense variable by its own rule and
// regularizer (model/dense_rules.hpp) exactly as row_update does on the same
// numbers, on a range that cuts variables, in async, sync and ssp mode, and its
// slots travel with its snapshot and its init.
#include <doctest/doctest.h>

#include <cstring>
#include <random>

#include "actors/parameter_shard.hpp"
#include "deterministic_fixture.hpp"
#include "model/dense_rules.hpp"
#include "model/row_update.hpp"
#include "model/schedule.hpp"
#include "model/update.hpp"

namespace test_shard_dense_rules {

using namespace downpour;

namespace {

using downpour::testing::random_floats;

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::vector<float> plain(const floats& v) { return {v.begin(), v.end()}; }

// Every rule, a regularized SGD, a fixed learning rate and a plain SGD.
model_layout mixed_layout() {
  return model_layout(
      "mixed", "t",
      {{.name = "a", .rows = 3, .cols = 4, .update = {.rule = update_rule::adagrad, .learning_rate = 0.05f}},
       {.name = "b", .rows = 1, .cols = 5, .update = {.rule = update_rule::momentum}},
       {.name = "c", .rows = 2, .cols = 3, .update = {.rule = update_rule::adam}, .reg = {.l2 = 0.1f}},
       {.name = "d", .rows = 1, .cols = 7, .update = {.rule = update_rule::ftrl, .ftrl_l1 = 0.01f}},
       {.name = "e", .rows = 2, .cols = 2},
       {.name = "f", .rows = 1, .cols = 3, .reg = {.l1 = 0.02f}}});
}

// The model's update by row_update on each whole variable, the SGD kernel
// on the plain ones: what every shard's part must match.
struct oracle {
  const model_layout& layout;
  std::vector<float> w;
  std::vector<std::vector<float>> slots;

  oracle(const model_layout& l, std::vector<float> start) : layout(l), w(std::move(start)) {
    for (const auto& v : layout.variables()) {
      slots.emplace_back(slots_of(v.update.rule) * v.size());
      fill_initial_slots(v.update, slots.back().data(), v.size());
    }
  }

  void update(const std::vector<float>& g, float lr, std::int64_t step) {
    for (std::size_t i = 0; i < layout.variables().size(); ++i) {
      const auto& v = layout.variables()[i];
      if (plain_sgd(v)) {
        sgd_into(w.data() + v.offset, w.data() + v.offset, g.data() + v.offset, v.size(), lr);
        continue;
      }
      row_update(v.update, v.reg, lr, step).apply(w.data() + v.offset, slots[i].data(),
                                                   g.data() + v.offset, v.size());
    }
  }

  std::vector<float> part(std::size_t from, std::size_t n) const {
    return {w.begin() + from, w.begin() + from + n};
  }
};

struct fixture : downpour::testing::deterministic_fixture {
  model_layout layout = mixed_layout();
  std::vector<float> start = random_floats(layout.size(), 1);

  // A shard of [from, from + n) of the flat buffer.
  shard_actor shard_of(train_mode mode, std::size_t from, std::size_t n, std::size_t required,
                       std::vector<float> slots = {}, std::int64_t step = 0) {
    shard_config c;
    c.mode = mode;
    c.last_step = 1000;
    c.required = required;
    c.dense = layout.variables();
    auto shard = spawn_parameter_shard(*sys, c);
    shard_init init;
    init.ranges = {from, n};
    init.params.values = floats(start.begin() + from, start.begin() + from + n);
    init.ema.values = init.params.values;
    init.slots = tensor{slots};
    init.step = step;
    (*chief)->send(shard, init_atom_v, std::move(init));
    run();
    return shard;
  }

  std::vector<float> params_of(const shard_actor& shard) {
    return plain(ask<pull_reply>(shard, pull_atom_v, std::int64_t{0}).params.values());
  }
};

shared_tensor part_of(const std::vector<float>& g, std::size_t from, std::size_t n) {
  return shared_tensor{floats(g.begin() + from, g.begin() + from + n)};
}

}  // namespace

TEST_CASE("a range cutting variables holds one segment per variable part with a rule of its own") {
  const model_layout layout = mixed_layout();
  // [5, 30): a from its value 5, b, c, d; [33, 37): e's last value (plain), f.
  const dense_rules rules(layout.variables(), {5, 25, 33, 4});
  REQUIRE(rules.segments().size() == 5);
  CHECK(rules.segments()[0].first == 5);
  CHECK(rules.segments()[0].size == 7);
  CHECK(rules.segments()[3].variable == 3);
  CHECK(rules.segments()[3].local == 18);
  CHECK(rules.segments()[4].variable == 5);  // f: SGD, but regularized
  CHECK(rules.segments()[4].local == 26);
  CHECK(rules.slots().size() == 7 + 5 + 2 * 6 + 2 * 7);
  CHECK(rules.slots()[0] == 0.1f);  // AdaGrad's initial accumulator
  CHECK(rules.slots()[7] == 0.0f);  // momentum's starts at 0
  CHECK(dense_rules(layout.variables(), {30, 4}).plain());  // e alone
}

TEST_CASE_FIXTURE(fixture,
                  "an async shard applies each dense variable's rule to its part as row_update "
                  "does, on every push") {
  const std::size_t from = 5, n = 27;  // cuts a and e
  auto shard = shard_of(train_mode::async, from, n, 1);
  oracle ref(layout, start);
  lr_schedule schedule;
  for (std::int64_t step = 0; step < 4; ++step) {
    const auto g = random_floats(layout.size(), 10 + static_cast<unsigned>(step));
    (*chief)->send(shard, push_atom_v, push_msg{step, 0, part_of(g, from, n)});
    ref.update(g, learning_rate_at(schedule, step), step);
    CHECK(same_bits(params_of(shard), ref.part(from, n)));
  }
  stop(shard);
}

TEST_CASE_FIXTURE(fixture,
                  "a sync shard applies each dense variable's rule once per step to the round's "
                  "mean") {
  const std::size_t from = 0, n = layout.size();
  auto shard = shard_of(train_mode::sync, from, n, 3);
  oracle ref(layout, start);
  lr_schedule schedule;
  for (std::int64_t step = 0; step < 3; ++step) {
    std::vector<float> sum(n, 0.0f);
    for (std::uint32_t w = 0; w < 3; ++w) {
      const auto g = random_floats(n, 100 * static_cast<unsigned>(step) + w);
      for (std::size_t i = 0; i < n; ++i) sum[i] += g[i];
      (*chief)->send(shard, push_atom_v, push_msg{step, w, part_of(g, 0, n)});
    }
    for (auto& x : sum) x *= 1.0f / 3.0f;
    ref.update(sum, learning_rate_at(schedule, step), step);
    const auto got = params_of(shard);
    CHECK(same_bits(got, ref.part(0, n)));
  }
  stop(shard);
}

TEST_CASE_FIXTURE(fixture,
                  "an ssp shard applies each dense variable's rule to every push as it comes, "
                  "a stale one at the shard's own step") {
  const std::size_t from = 5, n = 27;
  auto shard = shard_of(train_mode::ssp, from, n, 1);
  oracle ref(layout, start);
  lr_schedule schedule;
  // Two workers within a staleness of 1: each push computed one step behind
  // the shard's after the first.
  for (std::int64_t step = 0; step < 5; ++step) {
    const auto g = random_floats(layout.size(), 30 + static_cast<unsigned>(step));
    const auto worker = static_cast<std::uint32_t>(step % 2);
    const std::int64_t computed_at = step == 0 ? 0 : step - 1;
    (*chief)->send(shard, push_atom_v, push_msg{computed_at, worker, part_of(g, from, n)});
    ref.update(g, learning_rate_at(schedule, step), step);
    CHECK(same_bits(params_of(shard), ref.part(from, n)));
  }
  stop(shard);
}

TEST_CASE_FIXTURE(fixture,
                  "a shard's dense slots come out in its snapshot and back in through an init "
                  "on another cut, where the updates go on as one shard's") {
  lr_schedule schedule;
  const std::size_t n = layout.size();
  const auto g0 = random_floats(n, 7), g1 = random_floats(n, 8);
  oracle ref(layout, start);
  ref.update(g0, learning_rate_at(schedule, 0), 0);
  auto one = shard_of(train_mode::async, 0, n, 1);
  (*chief)->send(one, push_atom_v, push_msg{0, 0, part_of(g0, 0, n)});
  const auto snap = ask<shard_snapshot>(one, snapshot_atom_v);
  stop(one);
  const auto whole = whole_slots(layout.variables(), {{snap.ranges, plain(snap.slots.values)}});
  CHECK(whole.size() == whole_slot_count(layout.variables()));
  ref.update(g1, learning_rate_at(schedule, 1), 1);
  start = plain(snap.params.values);
  const std::size_t cut = 17;  // inside c
  auto left = shard_of(train_mode::async, 0, cut, 1,
                       shard_slots(layout.variables(), {0, cut}, whole), 1);
  auto right = shard_of(train_mode::async, cut, n - cut, 1,
                        shard_slots(layout.variables(), {cut, n - cut}, whole), 1);
  (*chief)->send(left, push_atom_v, push_msg{1, 0, part_of(g1, 0, cut)});
  (*chief)->send(right, push_atom_v, push_msg{1, 0, part_of(g1, cut, n - cut)});
  CHECK(same_bits(params_of(left), ref.part(0, cut)));
  CHECK(same_bits(params_of(right), ref.part(cut, n - cut)));
  stop(left);
  stop(right);
}

TEST_CASE_FIXTURE(fixture, "an init with slots of the wrong size is refused, naming both sizes") {
  shard_config c;
  c.dense = layout.variables();
  auto shard = spawn_parameter_shard(*sys, c);
  shard_init init;
  init.ranges = {0, layout.size()};
  init.params.values = floats(start.begin(), start.end());
  init.ema.values = init.params.values;
  init.slots = tensor{std::vector<float>(3, 0.0f)};
  auto slot = std::make_shared<std::string>();
  sys->spawn([=](caf::event_based_actor* self) {
    self->request(shard, caf::infinite, init_atom_v, init)
        .then([=](std::int64_t) { *slot = "accepted"; },
              [=](caf::error& err) { *slot = self->system().render(err); });
  });
  run();
  CHECK(slot->find("dense slots of 3 floats for a shard holding 43") != std::string::npos);
  stop(shard);
}

}  // namespace test_shard_dense_rules
