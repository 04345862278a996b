// A shard whose keys span two row variables of different widths and rules,
// on CAF's deterministic scheduler: pulls and pushes each key at its
// variable's width, updates by its variable's rule, sync rounds, and rows
// moved in pages across the variables' boundary.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "actors/parameter_shard.hpp"
#include "deterministic_fixture.hpp"
#include "protocol/row_pages.hpp"

namespace test_shard_row_variables {

using namespace downpour;

namespace {

// "wide": keys [0, 10), 1 float a key, SGD; "emb": keys [10, 20), 3 floats
// a key, AdaGrad. Both start at zeros; the job's learning rate is 0.5.
row_tables_spec two_variables() {
  const model_layout layout(
      "m", "",
      {{.name = "wide", .rows = 10, .cols = 1, .store = storage::rows},
       {.name = "emb", .rows = 10, .cols = 3, .store = storage::rows,
        .update = {.rule = update_rule::adagrad}}});
  return row_tables_of(layout, 0);
}

struct vars_fixture : downpour::testing::deterministic_fixture {
  // A shard owning keys [first, last) of both variables' key space.
  shard_actor shard_of(train_mode mode, std::uint64_t first, std::uint64_t last,
                       std::size_t required = 1) {
    shard_config c;
    c.mode = mode;
    c.last_step = 1000;
    c.required = required;
    c.schedule = lr_schedule{0.5f, 1.0f, 1000, false};
    c.rows = two_variables();
    auto shard = spawn_parameter_shard(*sys, c);
    (*chief)->send(shard, init_atom_v, init_of(first, last, 0));
    run();
    return shard;
  }

  static shard_init init_of(std::uint64_t first, std::uint64_t last, std::int64_t step) {
    shard_init init;
    init.ranges = {0, 1};
    init.step = step;
    init.params.values = floats{0.0f};
    init.ema.values = floats{0.0f};
    init.rows.first = first;
    init.rows.last = last;
    return init;
  }

  std::vector<float> pull(const shard_actor& s, std::uint32_t worker,
                          std::vector<std::uint64_t> keys, std::int64_t min_step = 0) {
    const auto r =
        ask<pull_reply>(s, pull_atom_v, row_pull{min_step, worker, key_list{std::move(keys)}});
    return {r.rows.values.begin(), r.rows.values.end()};
  }

  // "accepted at STEP", or "ERRC: message".
  std::string push(const shard_actor& s, std::uint32_t worker, std::int64_t step,
                   std::vector<std::uint64_t> keys, std::vector<float> rows) {
    return push_verdict(s, push_msg{step, worker, shared_tensor{std::vector<float>{0.0f}},
                                    key_list{std::move(keys)}, tensor{rows}});
  }
};

// AdaGrad's step from a fresh row at lr 0.5: the accumulator starts at 0.1.
double adagrad_once(double g) {
  return -0.5 * g / std::sqrt(0.1 + g * g);
}

// Keys 8, 9 of "wide" and 10, 11 of "emb", values and AdaGrad slots.
row_part four_rows() {
  row_part all;
  all.first = 0;
  all.last = 20;
  all.keys.keys = {8, 9, 10, 11};
  all.values.values = floats{1, 2, 3, 4, 5, 6, 7, 8};
  all.accumulators.values = floats{0.5f, 0.6f, 0.7f, 0.8f, 0.9f, 1.0f};
  return all;
}

}  // namespace

TEST_CASE_FIXTURE(vars_fixture,
                  "a shard whose keys span two variables reads and updates each key at its "
                  "variable's width by its variable's rule") {
  auto shard = shard_of(train_mode::async, 5, 15);
  CHECK(pull(shard, 1, {7, 12}) == std::vector<float>{0, 0, 0, 0});
  CHECK(push(shard, 1, 0, {7, 12}, {2.0f, 1.0f, -2.0f, 3.0f}) == "accepted at 1");
  const auto w = pull(shard, 1, {7, 12});
  REQUIRE(w.size() == 4);
  CHECK(w[0] == doctest::Approx(-1.0));  // SGD: 0 - 0.5 * 2
  CHECK(w[1] == doctest::Approx(adagrad_once(1.0)).epsilon(1e-6));
  CHECK(w[2] == doctest::Approx(adagrad_once(-2.0)).epsilon(1e-6));
  CHECK(w[3] == doctest::Approx(adagrad_once(3.0)).epsilon(1e-6));
  auto s = ask<shard_snapshot>(shard, snapshot_atom_v);
  CHECK(s.rows.keys.keys == std::vector<std::uint64_t>{7, 12});
  CHECK(s.rows.values.values.size() == 4);
  // SGD keeps no slots; AdaGrad one accumulator per column.
  REQUIRE(s.rows.accumulators.values.size() == 3);
  CHECK(s.rows.accumulators.values[2] == doctest::Approx(9.1).epsilon(1e-6));
  stop(shard);
}

TEST_CASE_FIXTURE(vars_fixture,
                  "a push whose values do not fit its keys' widths is refused and never applied") {
  auto shard = shard_of(train_mode::async, 5, 15);
  pull(shard, 1, {7, 12});
  const auto refused = push(shard, 1, 0, {7, 12}, {1.0f, 1.0f});
  CHECK(refused.rfind("shape_mismatch: ", 0) == 0);
  CHECK(refused.find("2 rows of 4 values") != std::string::npos);
  CHECK(pull(shard, 1, {7, 12}) == std::vector<float>{0, 0, 0, 0});
  stop(shard);
}

TEST_CASE_FIXTURE(vars_fixture,
                  "a sync round averages each key over the gradients that hold it, at each "
                  "variable's width") {
  auto shard = shard_of(train_mode::sync, 0, 20, 2);
  pull(shard, 0, {3, 10});
  pull(shard, 1, {3});
  CHECK(push(shard, 0, 0, {3, 10}, {1.0f, 0.0f, 0.0f, 2.0f}) == "accepted at 0");
  CHECK(push(shard, 1, 0, {3}, {3.0f}) == "accepted at 1");
  const auto w = pull(shard, 0, {3, 10}, 1);
  REQUIRE(w.size() == 4);
  CHECK(w[0] == doctest::Approx(-1.0));  // the mean of 1 and 3 at lr 0.5
  CHECK(w[1] == 0.0f);
  CHECK(w[3] == doctest::Approx(adagrad_once(2.0)).epsilon(1e-6));  // worker 0's alone
  stop(shard);
}

TEST_CASE("pages of rows split and join across a variables' boundary, each key at its width") {
  const row_tables_spec spec = two_variables();
  const row_part all = four_rows();
  const row_part first = page_of(all, 0, 3, spec);
  CHECK(first.keys.keys == std::vector<std::uint64_t>{8, 9, 10});
  CHECK(first.values.values == floats{1, 2, 3, 4, 5});
  CHECK(first.accumulators.values == floats{0.5f, 0.6f, 0.7f});
  row_part second = page_of(all, 1, 3, spec);
  CHECK(second.values.values == floats{6, 7, 8});
  CHECK(second.accumulators.values == floats{0.8f, 0.9f, 1.0f});
  CHECK(check_page(first, spec) == caf::none);
  row_part joined = first;
  REQUIRE(append_page(joined, second) == caf::none);
  CHECK(joined.values.values == all.values.values);
  CHECK(joined.accumulators.values == all.accumulators.values);
  row_part short_page = first;
  short_page.values.values.pop_back();
  CHECK(check_page(short_page, spec) == errc::shape_mismatch);
  // The widest row (3 values, 3 slots) sizes a page: as wide as row_wire_bytes(3).
  CHECK(rows_per_page(spec) == rows_per_page(3));
}

TEST_CASE_FIXTURE(vars_fixture,
                  "a restore's pages across the variables' boundary load every key's values and "
                  "slots") {
  auto shard = shard_of(train_mode::async, 0, 20);
  const row_tables_spec spec = two_variables();
  const row_part all = four_rows();
  row_part bad = page_of(all, 0, 3, spec);
  bad.accumulators.values.pop_back();
  CHECK_FALSE(request<std::uint64_t>(shard, init_atom_v, bad)->has_value());  // nothing staged
  CHECK(ask<std::uint64_t>(shard, init_atom_v, page_of(all, 0, 3, spec)) == 3);
  auto back = init_of(0, 20, 5);
  back.rows = page_of(all, 1, 3, spec);
  (*chief)->send(shard, restore_atom_v, std::move(back));
  run();
  auto s = ask<shard_snapshot>(shard, snapshot_atom_v);
  CHECK(s.step == 5);
  CHECK(s.rows.keys.keys == all.keys.keys);
  CHECK(s.rows.values.values == all.values.values);
  CHECK(s.rows.accumulators.values == all.accumulators.values);
  stop(shard);
}

}  // namespace test_shard_row_variables
