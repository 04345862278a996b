// Several row variables of different widths and rules held as one store
// over the model's key space: pulls, pushes and dumps across the variables'
// boundary, each key at its variable's width, slots saved and restored.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "model/row_tables.hpp"

namespace test_row_tables {

using namespace downpour;

namespace {

// "wide": 6 rows of 1 by FTRL; "emb": 4 rows of 3 by AdaGrad at its own lr.
model_layout two_variables() {
  return model_layout(
      "m", "",
      {{.name = "wide", .rows = 6, .cols = 1, .store = storage::rows,
        .update = {.rule = update_rule::ftrl, .ftrl_l1 = 0.01f}},
       {.name = "bias", .rows = 1, .cols = 1},
       {.name = "emb", .rows = 4, .cols = 3, .init = {init_kind::truncated_normal, 0.1f},
        .store = storage::rows,
        .update = {.rule = update_rule::adagrad, .learning_rate = 0.05f},
        .reg = {.l2 = 0.1f}}});
}

const std::vector<std::uint64_t> kKeys = {1, 5, 6, 9};  // two of each variable
const std::vector<float> kGrad = {0.5f, -1.0f, 0.1f, 0.2f, 0.3f, -0.4f, 0.0f, 0.25f};

}  // namespace

TEST_CASE("the tables follow the layout's row variables, each with its rule and key range") {
  const row_tables_spec spec = row_tables_of(two_variables(), 7);
  REQUIRE(spec.tables.size() == 2);
  CHECK(spec.tables[1].first_key == 6);
  CHECK(spec.tables[1].dim == 3);
  CHECK(spec.tables[1].update.rule == update_rule::adagrad);
  CHECK(spec.tables[1].reg.l2 == 0.1f);
  CHECK(spec.tables[1].init_seed == 7);
  CHECK(spec.keys() == 10);
  CHECK(spec.table_of(5) == 0);
  CHECK(spec.table_of(6) == 1);
  CHECK(spec.values_for(kKeys) == 8);
  CHECK(spec.slots_for(kKeys) == 2 * 2 + 2 * 3);  // ftrl n, z; adagrad's accumulator
  CHECK(spec.widest_row() == 6);
}

TEST_CASE("a push across the boundary updates each variable's rows by its own rule") {
  const model_layout layout = two_variables();
  const row_tables_spec spec = row_tables_of(layout, 7);
  row_tables store(spec);
  sparse_table wide(spec.tables[0]);
  sparse_table emb(spec.tables[1]);
  const auto before = store.pull(kKeys);
  REQUIRE(before.size() == 8);
  REQUIRE_FALSE(store.push({kKeys, kGrad}, {0.2f, 3}));
  REQUIRE_FALSE(wide.push({{1, 5}, {0.5f, -1.0f}}, {0.2f, 3}));
  REQUIRE_FALSE(emb.push({{6, 9}, {0.1f, 0.2f, 0.3f, -0.4f, 0.0f, 0.25f}}, {0.2f, 3}));
  std::vector<float> expected = wide.pull({1, 5});
  const auto tail = emb.pull({6, 9});
  expected.insert(expected.end(), tail.begin(), tail.end());
  CHECK(store.pull(kKeys) == expected);
  CHECK(store.rows_held() == 4);
  // The embedding row moved by AdaGrad at its own lr 0.05 with L2 0.1, from its initial value.
  const float w = before[2];
  const float g = 0.1f + 0.1f * w;
  CHECK(store.pull({6})[0] == doctest::Approx(w - 0.05f * g / std::sqrt(0.1f + g * g)));
}

TEST_CASE("a push of the wrong count for the keys' widths is refused whole") {
  row_tables store(row_tables_of(two_variables(), 7));
  CHECK(store.push({kKeys, std::vector<float>(4 * 3, 1.0f)}, 0.1f) ==
        sparse_refusal::value_count);
  CHECK(store.push({{1, 10}, {1.0f, 1.0f}}, 0.1f) == sparse_refusal::key_out_of_range);
  CHECK(store.push({{6, 1}, {1.0f, 1.0f, 1.0f, 1.0f}}, 0.1f) ==
        sparse_refusal::keys_not_ascending);
  CHECK(store.refused(sparse_refusal::value_count) == 1);
  CHECK(store.rows_held() == 0);
}

TEST_CASE("a dump and load keep every variable's rows and slots: the next step is the same") {
  const row_tables_spec spec = row_tables_of(two_variables(), 7);
  row_tables a(spec);
  REQUIRE_FALSE(a.push({kKeys, kGrad}, 0.2f));
  REQUIRE_FALSE(a.push({{5, 9}, {0.3f, 1.0f, -1.0f, 0.5f}}, 0.2f));
  const row_dump all = a.dump(0, spec.keys());
  CHECK(all.keys == kKeys);
  CHECK(all.values.size() == 8);
  CHECK(all.accumulators.size() == 10);
  const row_dump part = a.dump(5, 7);  // across the boundary
  CHECK(part.keys == std::vector<std::uint64_t>{5, 6});
  CHECK(part.values.size() == 4);
  CHECK(part.accumulators.size() == 2 + 3);
  row_tables b(spec);
  b.load(all);
  REQUIRE_FALSE(a.push({kKeys, kGrad}, 0.2f));
  REQUIRE_FALSE(b.push({kKeys, kGrad}, 0.2f));
  CHECK(a.pull(kKeys) == b.pull(kKeys));
  CHECK(a.dump(0, 10).accumulators == b.dump(0, 10).accumulators);
  row_dump short_slots = all;
  short_slots.accumulators.pop_back();
  CHECK_THROWS_AS(b.load(short_slots), std::invalid_argument);
}

TEST_CASE("a sync round's mean is taken per row, each key at its variable's width") {
  row_tables store(row_tables_of(two_variables(), 7));
  const keyed_rows one{{1, 6}, {1.0f, 1.0f, 2.0f, 3.0f}};
  const keyed_rows two{{1, 9}, {3.0f, 4.0f, 5.0f, 6.0f}};
  const keyed_rows mean = store.mean_per_row({one, two});
  CHECK(mean.keys == std::vector<std::uint64_t>{1, 6, 9});
  CHECK(mean.values == std::vector<float>{2.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f});
}

}  // namespace test_row_tables
