// A shard's rows of a sparse variable on CAF's deterministic scheduler:
// pulls by key, async and sync updates (TF's per-row mean), AdaGrad, the
// refusals of bad keys and rows, snapshots and restores.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "actors/parameter_shard.hpp"
#include "config/checked_size.hpp"
#include "protocol/row_pages.hpp"
#include "deterministic_fixture.hpp"

namespace test_shard_rows {

using namespace downpour;

namespace {

constexpr std::uint64_t kRows = 1'000'000;

struct rows_fixture : downpour::testing::deterministic_fixture {
  // One variable of kRows rows of one column, updated by opt.
  static row_tables_spec spec_of_rows(update_rule opt = update_rule::sgd) {
    sparse_table_spec spec;
    spec.rows = kRows;
    spec.dim = 1;
    spec.update.rule = opt;
    return row_tables_spec{{spec}};
  }

  // A shard owning rows [first, last) of a 1-column variable, one dense
  // float (a bias), plain SGD at lr 0.5 (no decay).
  shard_actor rows_shard(train_mode mode, std::uint64_t first, std::uint64_t last,
                         update_rule opt = update_rule::sgd, std::size_t required = 1) {
    shard_config c;
    c.mode = mode;
    c.last_step = 1000;
    c.required = required;
    c.schedule = lr_schedule{0.5f, 1.0f, 1000, false};
    c.rows = spec_of_rows(opt);
    auto shard = spawn_parameter_shard(*sys, c);
    shard_init init;
    init.ranges = {0, 1};
    init.params.values = floats{0.0f};
    init.ema.values = floats{0.0f};
    init.rows.first = first;
    init.rows.last = last;
    (*chief)->send(shard, init_atom_v, std::move(init));
    run();
    return shard;
  }

  pull_reply pull(const shard_actor& s, std::uint32_t worker, std::vector<std::uint64_t> keys,
                  std::int64_t min_step = 0) {
    return ask<pull_reply>(s, pull_atom_v, row_pull{min_step, worker, key_list{std::move(keys)}});
  }

  // "accepted at STEP", or "ERRC: message".
  template <class T, class... Ts>
  std::string answer(const shard_actor& s, Ts... xs) {
    auto slot = std::make_shared<std::string>("no answer");
    sys->spawn([=](caf::event_based_actor* self) {
      self->request(s, caf::infinite, xs...)
          .then([=](T& x) { *slot = "accepted at " + step_text(x); },
                [=](caf::error& err) {
                  *slot =
                      to_string(static_cast<errc>(err.code())) + ": " + self->system().render(err);
                });
    });
    run();
    return *slot;
  }

  std::string push(const shard_actor& s, std::uint32_t worker, std::int64_t step,
                   std::vector<std::uint64_t> keys, std::vector<float> rows, float bias = 0.0f) {
    push_msg m{step, worker, shared_tensor{std::vector<float>{bias}}, key_list{std::move(keys)},
               tensor{rows}};
    return answer<std::int64_t>(s, push_atom_v, std::move(m));
  }

  push_pull_reply push_pull_of(const shard_actor& s, std::uint32_t worker, std::int64_t step,
                               std::vector<std::uint64_t> keys, std::vector<float> rows,
                               std::vector<std::uint64_t> next_keys) {
    push_msg m{step, worker, shared_tensor{std::vector<float>{0.0f}}, key_list{std::move(keys)},
               tensor{rows}};
    return ask<push_pull_reply>(s, push_atom_v,
                                push_pull{std::move(m), row_pull{0, worker, key_list{next_keys}}});
  }

  static std::string step_text(std::int64_t step) { return std::to_string(step); }
  static std::string step_text(const pull_reply& r) { return std::to_string(r.step); }
  static std::string step_text(std::uint64_t rows) { return std::to_string(rows); }
  static std::string step_text(const row_part& p) { return std::to_string(p.keys.size()); }
};

std::vector<float> values(const pull_reply& r) {
  return {r.rows.values.begin(), r.rows.values.end()};
}

}  // namespace

TEST_CASE_FIXTURE(rows_fixture, "a pull of rows never pushed reads zeros and creates none") {
  auto shard = rows_shard(train_mode::async, 0, kRows);
  auto r = pull(shard, 1, {3, 70, 999'999});
  CHECK(values(r) == std::vector<float>{0, 0, 0});
  CHECK(ask<shard_stats>(shard, stats_atom_v).rows_held == 0);
  stop(shard);
}

TEST_CASE_FIXTURE(rows_fixture,
                  "an async push updates only its rows with SGD and the step advances") {
  auto shard = rows_shard(train_mode::async, 0, kRows);
  pull(shard, 1, {5, 9});
  CHECK(push(shard, 1, 0, {5, 9}, {1.0f, -2.0f}, 4.0f) == "accepted at 1");
  auto r = pull(shard, 2, {5, 6, 9});
  CHECK(r.step == 1);
  CHECK(values(r) == std::vector<float>{-0.5f, 0.0f, 1.0f});
  CHECK(r.params.values()[0] == doctest::Approx(-2.0f));  // the dense bias: 0 - 0.5 * 4
  CHECK(ask<shard_stats>(shard, stats_atom_v).rows_held == 2);
  stop(shard);
}

TEST_CASE_FIXTURE(rows_fixture, "AdaGrad keeps a per-row accumulator that a snapshot carries") {
  auto shard = rows_shard(train_mode::async, 0, kRows, update_rule::adagrad);
  pull(shard, 1, {7});
  push(shard, 1, 0, {7}, {2.0f});
  pull(shard, 1, {7});
  push(shard, 1, 1, {7}, {2.0f});
  // acc = 0.1 + 4 = 4.1, w = -0.5 * 2 / sqrt(4.1); then acc = 8.1, w -= 0.5 * 2 / sqrt(8.1)
  const double w = -1.0 / std::sqrt(4.1) - 1.0 / std::sqrt(8.1);
  auto s = ask<shard_snapshot>(shard, snapshot_atom_v);
  REQUIRE(s.rows.keys.keys == std::vector<std::uint64_t>{7});
  CHECK(s.rows.values.values[0] == doctest::Approx(w).epsilon(1e-6));
  REQUIRE(s.rows.accumulators.values.size() == 1);
  CHECK(s.rows.accumulators.values[0] == doctest::Approx(8.1).epsilon(1e-6));
  stop(shard);
}

TEST_CASE_FIXTURE(rows_fixture, "a sync round averages each row over the gradients that hold it") {
  // Workers A and B share row 10; only A has row 20: TF's
  // SparseConditionalAccumulator gives 10 the mean and 20 A's whole gradient.
  auto shard = rows_shard(train_mode::sync, 0, kRows, update_rule::sgd, 2);
  pull(shard, 0, {10, 20});
  pull(shard, 1, {10});
  CHECK(push(shard, 0, 0, {10, 20}, {1.0f, 4.0f}, 1.0f) == "accepted at 0");
  CHECK(push(shard, 1, 0, {10}, {3.0f}, 3.0f) == "accepted at 1");
  auto r = pull(shard, 0, {10, 20}, 1);
  CHECK(values(r) == std::vector<float>{-1.0f, -2.0f});       // -0.5 * 2, -0.5 * 4
  CHECK(r.params.values()[0] == doctest::Approx(-1.0f));      // the bias: mean of 1 and 3
  CHECK(push(shard, 1, 0, {10}, {3.0f}) == "accepted at 1");  // stale: dropped
  CHECK(ask<shard_snapshot>(shard, snapshot_atom_v).dropped == 1);
  stop(shard);
}

TEST_CASE_FIXTURE(rows_fixture,
                  "a sync pull waits at the barrier and then reads the rows of the new step") {
  auto shard = rows_shard(train_mode::sync, 0, kRows);
  pull(shard, 0, {1});
  auto waiting = request<pull_reply>(shard, pull_atom_v, row_pull{1, 1, key_list{{1}}});
  CHECK_FALSE(waiting->has_value());
  push(shard, 0, 0, {1}, {2.0f});
  REQUIRE(waiting->has_value());
  CHECK((*waiting)->step == 1);
  CHECK(values(**waiting) == std::vector<float>{-1.0f});
  stop(shard);
}

TEST_CASE_FIXTURE(
    rows_fixture,
    "keys outside the shard's rows, unsorted or twice are refused, counted and never applied") {
  auto shard = rows_shard(train_mode::async, 100, 200);
  auto pull_answer = [&](std::vector<std::uint64_t> keys) {
    return answer<pull_reply>(shard, pull_atom_v, row_pull{0, 1, key_list{std::move(keys)}});
  };
  CHECK(pull_answer({99}).rfind("bad_keys: ", 0) == 0);
  CHECK(pull_answer({150, 200}).find("outside this shard's rows [100, 200)") != std::string::npos);
  CHECK(pull_answer({120, 110}).find("after a higher one") != std::string::npos);
  CHECK(pull_answer({120, 120}).find("row 120 twice") != std::string::npos);
  CHECK(pull_answer({100, 199}) == "accepted at 0");
  CHECK(push(shard, 1, 0, {150}, {1.0f}).rfind("unpulled_rows: ", 0) == 0);
  CHECK(push(shard, 2, 0, {100}, {1.0f}).find("worker 2 did not pull") != std::string::npos);
  CHECK(push(shard, 1, 0, {199, 100}, {1.0f, 1.0f}).rfind("bad_keys: ", 0) == 0);
  CHECK(push(shard, 1, 0, {100, 199}, {1.0f}).rfind("shape_mismatch: ", 0) == 0);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(push(shard, 1, 0, {100, 199}, {1.0f, nan}).rfind("not_finite: ", 0) == 0);
  auto s = ask<shard_snapshot>(shard, snapshot_atom_v);
  CHECK(s.step == 0);
  CHECK(s.rejected == 9);
  CHECK(s.rows.keys.keys.empty());
  // The push of rows not pulled spent worker 1's pull: it pulls again.
  CHECK(push(shard, 1, 0, {100, 199}, {1.0f, 1.0f}).rfind("unpulled_rows: ", 0) == 0);
  CHECK(pull_answer({100, 199}) == "accepted at 0");
  CHECK(push(shard, 1, 0, {100, 199}, {1.0f, 1.0f}) == "accepted at 1");
  stop(shard);
}

TEST_CASE_FIXTURE(rows_fixture, "a restore replaces the rows held by those of the checkpoint") {
  auto shard = rows_shard(train_mode::async, 0, 500);
  pull(shard, 1, {1, 2});
  push(shard, 1, 0, {1, 2}, {1.0f, 1.0f});
  shard_init back;
  back.ranges = {0, 1};
  back.step = 40;
  back.params.values = floats{0.25f};
  back.ema.values = floats{0.25f};
  back.rows.first = 0;
  back.rows.last = 500;
  back.rows.keys = key_list{{3, 400}};
  back.rows.values.values = floats{0.5f, -0.5f};
  (*chief)->send(shard, restore_atom_v, std::move(back));
  run();
  auto s = ask<shard_snapshot>(shard, snapshot_atom_v);
  CHECK(s.step == 40);
  CHECK(s.rows.keys.keys == std::vector<std::uint64_t>{3, 400});
  CHECK(values(pull(shard, 1, {1, 3, 400})) == std::vector<float>{0.0f, 0.5f, -0.5f});
  stop(shard);
}

TEST_CASE_FIXTURE(rows_fixture,
                  "a restore's rows come in pages and a snapshot's rows go out in pages of one "
                  "frozen copy") {
  auto shard = rows_shard(train_mode::async, 0, kRows);
  const std::uint64_t page_rows = rows_per_page(1);
  REQUIRE(page_rows < kRows);
  row_part all;
  all.first = 0;
  all.last = kRows;
  for (std::uint64_t k = 0; k < kRows; ++k) all.keys.keys.push_back(k);
  all.values.values.assign(kRows, 0.5f);
  const std::uint64_t pages = page_count(kRows, page_rows);
  REQUIRE(pages == 2);
  CHECK(answer<std::uint64_t>(shard, init_atom_v, page_of(all, 0, page_rows, spec_of_rows())) ==
        "accepted at " + std::to_string(page_rows));
  shard_init back;
  back.ranges = {0, 1};
  back.step = 7;
  back.params.values = floats{0.25f};
  back.ema.values = floats{0.25f};
  back.rows = page_of(all, 1, page_rows, spec_of_rows());
  (*chief)->send(shard, restore_atom_v, std::move(back));
  run();
  auto s = ask<shard_snapshot>(shard, snapshot_atom_v);
  CHECK(s.step == 7);
  CHECK(s.row_pages == 2);
  CHECK(s.rows.keys.size() == page_rows);
  pull(shard, 1, {kRows - 1});
  push(shard, 1, 7, {kRows - 1}, {1.0f});  // after the snapshot: not in its pages
  auto rest = ask<row_part>(shard, snapshot_atom_v, row_page_ask{s.frozen, 1});
  REQUIRE(append_page(s.rows, rest) == caf::none);
  CHECK(s.rows.keys.keys == all.keys.keys);
  CHECK(s.rows.values.values.back() == 0.5f);
  CHECK(answer<row_part>(shard, snapshot_atom_v, row_page_ask{s.frozen, 1}).rfind("step_passed", 0) ==
        0);  // read to the end: dropped
  stop(shard);
}

TEST_CASE_FIXTURE(rows_fixture,
                  "the workers' read positions come with a restore of paged rows, and a paged "
                  "snapshot carries the newest one of each worker in its first part") {
  auto shard = rows_shard(train_mode::async, 0, kRows);
  const std::uint64_t page_rows = rows_per_page(1);
  row_part all;
  all.first = 0;
  all.last = kRows;
  for (std::uint64_t k = 0; k < kRows; ++k) all.keys.keys.push_back(k);
  all.values.values.assign(kRows, 0.5f);
  REQUIRE(page_count(kRows, page_rows) == 2);
  ask<std::uint64_t>(shard, init_atom_v, page_of(all, 0, page_rows, spec_of_rows()));
  shard_init back;
  back.ranges = {0, 1};
  back.step = 7;
  back.params.values = floats{0.25f};
  back.ema.values = floats{0.25f};
  back.rows = page_of(all, 1, page_rows, spec_of_rows());
  read_position at;
  at.plan = 9;
  at.pass = 2;
  at.batches = 5;
  back.positions = {worker_position{1, at}};
  (*chief)->send(shard, restore_atom_v, std::move(back));
  run();
  CHECK(ask<read_position>(shard, position_atom_v, std::uint32_t{1}).batches == 5);
  CHECK(ask<read_position>(shard, position_atom_v, std::uint32_t{2}).plan == 0);  // none saved
  pull(shard, 1, {kRows - 1});
  push_msg m{7, 1, shared_tensor{std::vector<float>{0.0f}}, key_list{{kRows - 1}},
             tensor{std::vector<float>{1.0f}}};
  at.batches = 6;
  m.position = {at};
  CHECK(answer<std::int64_t>(shard, push_atom_v, std::move(m)) == "accepted at 8");
  auto s = ask<shard_snapshot>(shard, snapshot_atom_v);
  CHECK(s.row_pages == 2);
  REQUIRE(s.positions.size() == 1);
  CHECK(s.positions[0].worker == 1);
  CHECK(s.positions[0].at.batches == 6);
  CHECK(s.positions[0].at.pass == 2);
  ask<row_part>(shard, snapshot_atom_v, row_page_ask{s.frozen, 1});
  stop(shard);
}

TEST_CASE_FIXTURE(rows_fixture, "sizes computed from 2^62 rows never overflow into a small bound") {
  const std::uint64_t huge = std::uint64_t{1} << 62;
  CHECK(row_message_bound(huge, 8) == row_message_bound(std::uint64_t{1} << 40, 8));
  CHECK(row_message_bound(huge, 8) <= kRowMessageBytes + row_wire_bytes(8));
  CHECK(row_message_bound(1000, 1) == rows_per_page(1) * row_wire_bytes(1));  // a page at least
  CHECK_THROWS_AS(checked_mul(huge, 8, "rows"), std::overflow_error);
}

TEST_CASE_FIXTURE(rows_fixture, "a shard of a dense model refuses a pull of rows") {
  shard_config c;
  c.mode = train_mode::async;
  c.last_step = 10;
  auto shard = initialized_shard(c, {1.0f, 2.0f});
  CHECK(answer<pull_reply>(shard, pull_atom_v, row_pull{0, 1, key_list{{1}}})
            .rfind("bad_keys: ", 0) == 0);
  stop(shard);
}

TEST_CASE_FIXTURE(rows_fixture,
                  "a push with the next pull is taken first and the pull reads its update") {
  auto shard = rows_shard(train_mode::async, 0, kRows);
  pull(shard, 1, {5, 9});
  auto r = push_pull_of(shard, 1, 0, {5, 9}, {1.0f, -2.0f}, {5, 6});
  CHECK_FALSE(r.refusal);
  CHECK(r.pushed == 1);
  CHECK(r.pull.step == 1);
  CHECK(values(r.pull) == std::vector<float>{-0.5f, 0.0f});
  // The rows of that pull are the ones the next push may name.
  CHECK(push(shard, 1, 1, {6}, {2.0f}) == "accepted at 2");
  CHECK(push(shard, 1, 2, {9}, {2.0f}).rfind("unpulled_rows: ", 0) == 0);
  stop(shard);
}

TEST_CASE_FIXTURE(
    rows_fixture,
    "a refused push with the next pull is counted, names why, and the pull is answered") {
  auto shard = rows_shard(train_mode::async, 0, kRows);
  pull(shard, 1, {5});
  auto r = push_pull_of(shard, 1, 0, {7}, {1.0f}, {7});
  REQUIRE(r.refusal);
  CHECK(r.refusal == errc::unpulled_rows);
  CHECK(r.pull.step == 0);
  CHECK(values(r.pull) == std::vector<float>{0.0f});
  CHECK(ask<shard_stats>(shard, stats_atom_v).rejected == 1);
  CHECK(ask<shard_stats>(shard, stats_atom_v).rows_held == 0);
  stop(shard);
}

}  // namespace test_shard_rows
