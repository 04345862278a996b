// The sparse row store a shard will hold: memory that grows with the rows
// pushed and not with N, key-seeded initial rows, SGD and AdaGrad against
// values computed by hand, refusals counted and never applied, and the sync
// round's mean per row.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "model/sparse_table.hpp"

namespace downpour::test_sparse_table {
namespace {

constexpr std::uint64_t kBig = std::uint64_t{1} << 26;

sparse_table_spec spec_of(std::uint64_t rows, std::size_t dim, update_rule optimizer) {
  sparse_table_spec spec;
  spec.rows = rows;
  spec.dim = dim;
  spec.update.rule = optimizer;
  return spec;
}

// This process's resident set now, from /proc/self/statm, in bytes.
std::size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0;
  std::size_t resident = 0;
  statm >> pages >> resident;
  return resident * 4096;
}

std::vector<float> row_of(const sparse_table& table, std::uint64_t key) {
  const float* row = table.find(key);
  REQUIRE(row != nullptr);
  return std::vector<float>(row, row + table.row_stride());
}

}  // namespace

TEST_CASE("a 2^26-row table with 1000 rows pushed holds those rows in well under a MiB") {
  const std::size_t before = resident_bytes();
  sparse_table table(spec_of(kBig, 1, update_rule::adagrad));
  keyed_rows push;
  for (std::uint64_t i = 0; i < 1000; ++i) push.keys.push_back(i * (kBig / 1000));
  push.values.assign(push.keys.size(), 0.5f);
  REQUIRE_FALSE(table.push(push, 0.1f));
  CHECK(table.rows_held() == 1000);
  // Signed: the resident set may also shrink meanwhile.
  const long growth = static_cast<long>(resident_bytes()) - static_cast<long>(before);
  MESSAGE("bytes used: " << table.bytes_used() << ", resident growth: " << growth);
  // A dense table would take 2^26 * 2 floats = 512 MiB.
  CHECK(table.bytes_used() < (std::size_t{1} << 20));
  CHECK(growth < (8L << 20));
  CHECK(table.find(1) == nullptr);
  CHECK(table.find(kBig) == nullptr);
}

TEST_CASE("a pull reads initial rows without creating them, the same in every table") {
  sparse_table_spec spec = spec_of(kBig, 4, update_rule::sgd);
  spec.init = {init_kind::truncated_normal, 0.1f};
  spec.init_seed = 7;
  sparse_table a(spec);
  sparse_table b(spec);
  // b has other rows and a grown hash already: a row's start must not care.
  keyed_rows other{{}, {}};
  for (std::uint64_t k = 0; k < 5000; ++k) other.keys.push_back(k * 11 + 3);
  other.values.assign(other.keys.size() * 4, 0.0f);
  REQUIRE_FALSE(b.push(other, 1.0f));

  std::vector<std::uint64_t> keys;
  for (std::uint64_t k = 1; k < 20000; k += 2) keys.push_back(k * 2);  // none of b's
  const std::vector<float> from_a = a.pull(keys);
  CHECK(from_a == b.pull(keys));
  CHECK(a.rows_held() == 0);
  double sum = 0;
  double squares = 0;
  for (float v : from_a) {
    CHECK(std::abs(v) <= 0.2f);
    sum += v;
    squares += double(v) * v;
  }
  const double n = static_cast<double>(from_a.size());
  CHECK(std::abs(sum / n) < 0.003);
  // A normal cut at 2 stddev keeps 0.774 of its variance.
  CHECK(std::sqrt(squares / n) == doctest::Approx(0.1 * std::sqrt(0.774)).epsilon(0.02));

  spec.init_seed = 8;
  CHECK(sparse_table(spec).pull(keys) != from_a);
  spec.init = {};
  CHECK(sparse_table(spec).pull({5, 9}) == std::vector<float>(8, 0.0f));
}

TEST_CASE("SGD and AdaGrad steps give the values computed by hand") {
  SUBCASE("SGD: w -= lr * g") {
    sparse_table table(spec_of(100, 2, update_rule::sgd));
    REQUIRE_FALSE(table.push({{3}, {0.5f, -1.0f}}, 0.1f));
    CHECK(row_of(table, 3) == std::vector<float>{-0.05f, 0.1f});
    REQUIRE_FALSE(table.push({{3, 4}, {1.0f, 2.0f, 4.0f, 0.0f}}, 0.2f));
    CHECK(row_of(table, 3)[0] == doctest::Approx(-0.25));
    CHECK(row_of(table, 3)[1] == doctest::Approx(-0.3));
    CHECK(row_of(table, 4) == std::vector<float>{-0.8f, 0.0f});
  }
  SUBCASE("AdaGrad: acc += g^2, w -= lr * g / sqrt(acc), acc starting at 0.1") {
    sparse_table table(spec_of(100, 2, update_rule::adagrad));
    REQUIRE_FALSE(table.push({{3}, {0.5f, -1.0f}}, 0.1f));
    std::vector<float> row = row_of(table, 3);  // w0, w1, acc0, acc1
    CHECK(row[2] == doctest::Approx(0.35));
    CHECK(row[3] == doctest::Approx(1.1));
    CHECK(row[0] == doctest::Approx(-0.0845154));  // -0.1 * 0.5 / sqrt(0.35)
    CHECK(row[1] == doctest::Approx(0.0953463));   // 0.1 * 1 / sqrt(1.1)
    REQUIRE_FALSE(table.push({{3}, {1.0f, 2.0f}}, 0.1f));
    row = row_of(table, 3);
    CHECK(row[2] == doctest::Approx(1.35));
    CHECK(row[3] == doctest::Approx(5.1));
    CHECK(row[0] == doctest::Approx(-0.1705818));  // -0.0845154 - 0.1 * 1 / sqrt(1.35)
    CHECK(row[1] == doctest::Approx(0.0067849));   // 0.0953463 - 0.1 * 2 / sqrt(5.1)
  }
}

TEST_CASE("refused pushes return and count their fault and change nothing") {
  sparse_table table(spec_of(1000, 2, update_rule::adagrad));
  REQUIRE_FALSE(table.push({{1, 7}, {1.0f, 1.0f, 1.0f, 1.0f}}, 0.1f));
  const std::vector<float> row1 = row_of(table, 1);
  const float nan = std::nanf("");
  const float inf = HUGE_VALF;
  const std::vector<std::pair<keyed_rows, sparse_refusal>> bad = {
      {{{1, 1000}, {1, 1, 1, 1}}, sparse_refusal::key_out_of_range},
      {{{1, 5, 5}, {1, 1, 1, 1, 1, 1}}, sparse_refusal::duplicate_key},
      {{{1, 9, 5}, {1, 1, 1, 1, 1, 1}}, sparse_refusal::keys_not_ascending},
      {{{1, 5}, {1, 1, 1}}, sparse_refusal::value_count},
      {{{1, 5}, {1, 1, 1, nan}}, sparse_refusal::not_finite},
      {{{1, 5}, {-inf, 1, 1, 1}}, sparse_refusal::not_finite},
  };
  for (const auto& [push, why] : bad) {
    CAPTURE(to_string(why));
    const std::uint64_t before = table.refused(why);
    CHECK(table.push(push, 0.1f) == why);
    CHECK(table.refused(why) == before + 1);
    CHECK(table.rows_held() == 2);
    CHECK(row_of(table, 1) == row1);
    CHECK(table.find(5) == nullptr);
  }
  CHECK(table.refused(sparse_refusal::not_finite) == 2);
  CHECK(table.check_keys({3, 2}) == sparse_refusal::keys_not_ascending);
  CHECK_THROWS_AS(table.pull({3, 3}), std::invalid_argument);
  CHECK_FALSE(table.push({{}, {}}, 0.1f));  // an empty push is no fault
}

TEST_CASE("the sync mean is per row, over the gradients that touched that row") {
  // Worker A pushes rows k = 4 and j = 9, worker B row k only (TF's
  // SparseConditionalAccumulator: g_k = (gA + gB) / 2, g_j = gA).
  const keyed_rows a{{4, 9}, {1.0f, 2.0f, 3.0f, 4.0f}};
  const keyed_rows b{{4}, {5.0f, -6.0f}};
  const keyed_rows c{{2, 9}, {1.0f, 1.0f, 6.0f, 8.0f}};
  const keyed_rows ab = mean_per_row({a, b}, 2);
  CHECK(ab.keys == std::vector<std::uint64_t>{4, 9});
  CHECK(ab.values == std::vector<float>{3.0f, -2.0f, 3.0f, 4.0f});
  const keyed_rows abc = mean_per_row({a, b, c}, 2);
  CHECK(abc.keys == std::vector<std::uint64_t>{2, 4, 9});
  CHECK(abc.values == std::vector<float>{1.0f, 1.0f, 3.0f, -2.0f, 4.5f, 6.0f});
  CHECK(mean_per_row({}, 2).keys.empty());
}

TEST_CASE("a table grown over many hash resizes and arena chunks finds every row") {
  sparse_table table(spec_of(std::uint64_t{1} << 40, 1, update_rule::sgd));
  std::vector<std::uint64_t> all;
  for (std::uint64_t round = 0; round < 20; ++round) {
    keyed_rows push;
    // An odd multiplier is a bijection mod 2^40: 200000 distinct scattered keys.
    for (std::uint64_t i = 0; i < 10000; ++i)
      push.keys.push_back(((round * 10000 + i) * 0x9e3779b97ull) & ((std::uint64_t{1} << 40) - 1));
    std::sort(push.keys.begin(), push.keys.end());
    for (std::uint64_t k : push.keys) push.values.push_back(static_cast<float>(k % 1000));
    REQUIRE_FALSE(table.push(push, 1.0f));
    all.insert(all.end(), push.keys.begin(), push.keys.end());
  }
  std::sort(all.begin(), all.end());
  REQUIRE(table.rows_held() == 200000);
  const std::vector<float> values = table.pull(all);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    wrong += values[i] != -static_cast<float>(all[i] % 1000);
  }
  CHECK(wrong == 0);
}

TEST_CASE("a table of 0 rows or rows of 0 floats is refused") {
  CHECK_THROWS_AS(sparse_table(spec_of(0, 1, update_rule::sgd)), std::invalid_argument);
  CHECK_THROWS_AS(sparse_table(spec_of(10, 0, update_rule::sgd)), std::invalid_argument);
}

TEST_CASE("a dump holds the rows in a key range, ascending, with AdaGrad's accumulators") {
  sparse_table table(spec_of(kBig, 2, update_rule::adagrad));
  const std::vector<std::uint64_t> keys = {3, 17, 40000000, kBig - 1};
  REQUIRE_FALSE(table.push({keys, {1, 2, 3, 4, 5, 6, 7, 8}}, 0.5f));
  REQUIRE_FALSE(table.push({{17}, {1, 1}}, 0.5f));
  const row_dump all = table.dump(0, kBig);
  CHECK(all.keys == keys);
  REQUIRE(all.values.size() == 8);
  REQUIRE(all.accumulators.size() == 8);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::vector<float> row = row_of(table, keys[i]);
    CHECK(all.values[2 * i] == row[0]);
    CHECK(all.values[2 * i + 1] == row[1]);
    CHECK(all.accumulators[2 * i] == row[2]);
    CHECK(all.accumulators[2 * i + 1] == row[3]);
  }
  CHECK(all.accumulators[2] == doctest::Approx(0.1f + 9 + 1));  // key 17: two pushes
  const row_dump middle = table.dump(17, 40000001);
  CHECK(middle.keys == std::vector<std::uint64_t>{17, 40000000});
  CHECK(table.dump(18, 40000000).keys.empty());
  sparse_table sgd(spec_of(100, 1, update_rule::sgd));
  REQUIRE(sgd.push({{9, 2}, {1, 1}}, 1.0f).has_value());  // not ascending: refused
  REQUIRE_FALSE(sgd.push({{2, 9}, {1, 1}}, 1.0f));
  const row_dump plain = sgd.dump(0, 100);
  CHECK(plain.keys == std::vector<std::uint64_t>{2, 9});
  CHECK(plain.values == std::vector<float>{-1, -1});
  CHECK(plain.accumulators.empty());
}

TEST_CASE("a 2^26-row AdaGrad table loaded from its dump is the same table, and trains on alike") {
  sparse_table table(spec_of(kBig, 3, update_rule::adagrad));
  keyed_rows push;
  for (std::uint64_t i = 0; i < 5000; ++i) push.keys.push_back(i * 13421 + 7);
  for (std::size_t i = 0; i < push.keys.size() * 3; ++i)
    push.values.push_back(static_cast<float>(i % 11) - 5.0f);
  REQUIRE_FALSE(table.push(push, 0.1f));
  sparse_table restored(spec_of(kBig, 3, update_rule::adagrad));
  REQUIRE_FALSE(restored.push({{1}, {1, 1, 1}}, 0.1f));  // replaced by the load
  restored.load(table.dump(0, kBig));
  CHECK(restored.rows_held() == 5000);
  CHECK(restored.find(1) == nullptr);
  const row_dump a = table.dump(0, kBig), b = restored.dump(0, kBig);
  CHECK(a.keys == b.keys);
  CHECK(a.values == b.values);
  CHECK(a.accumulators == b.accumulators);
  // The accumulators came back: the next step is the same in both.
  REQUIRE_FALSE(table.push(push, 0.1f));
  REQUIRE_FALSE(restored.push(push, 0.1f));
  CHECK(table.dump(0, kBig).values == restored.dump(0, kBig).values);
  CHECK(restored.bytes_used() <= table.bytes_used());  // memory follows the rows, not N
  // Without accumulators every row starts AdaGrad afresh at 0.1.
  row_dump values_only = a;
  values_only.accumulators.clear();
  restored.load(values_only);
  CHECK(restored.dump(0, kBig).accumulators == std::vector<float>(a.values.size(), 0.1f));
}

TEST_CASE("a load of keys out of order or range, or of sizes that do not fit, changes nothing") {
  sparse_table table(spec_of(100, 2, update_rule::adagrad));
  REQUIRE_FALSE(table.push({{5}, {1, 1}}, 1.0f));
  const auto error_of = [&](const row_dump& rows) {
    try {
      table.load(rows);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error_of({{1, 100}, {0, 0, 0, 0}, {}}) ==
        "sparse table: load of key 100 (the table has keys [0, 100))");
  CHECK(error_of({{4, 4}, {0, 0, 0, 0}, {}}) ==
        "sparse table: load of key 4 after key 4 (keys must ascend)");
  CHECK(error_of({{4}, {0}, {}}) == "sparse table: load of 1 values for 1 rows of 2");
  CHECK(error_of({{4}, {0, 0}, {1}}) ==
        "sparse table: load of 1 optimizer slots for 1 rows of 2 (adagrad)");
  CHECK(table.rows_held() == 1);
  CHECK(table.find(5) != nullptr);
  sparse_table sgd(spec_of(100, 1, update_rule::sgd));
  CHECK_THROWS_WITH_AS(sgd.load({{1}, {0}, {1}}),
                       "sparse table: load of 1 optimizer slots for 1 rows of 0 (sgd)",
                       std::invalid_argument);
}

}  // namespace downpour::test_sparse_table

namespace downpour::test_sparse_table {
namespace {

// Keys 0, 3, 6, ... of which the even ones are held: a read finds half.
std::vector<std::uint64_t> every_third(std::size_t n) {
  std::vector<std::uint64_t> keys(n);
  for (std::size_t i = 0; i < n; ++i) keys[i] = 3 * i;
  return keys;
}

keyed_rows gradient_of(const std::vector<std::uint64_t>& keys, std::size_t dim, float scale) {
  keyed_rows g{keys, std::vector<float>(keys.size() * dim)};
  for (std::size_t i = 0; i < g.values.size(); ++i)
    g.values[i] = scale * static_cast<float>(i % 7) - 1.0f;
  return g;
}

}  // namespace

TEST_CASE("a read gives pull's values and the rows it found, none for a row never pushed") {
  sparse_table table(spec_of(1000, 2, update_rule::adagrad));
  REQUIRE_FALSE(table.push(gradient_of({3, 9}, 2, 0.5f), 0.1f));
  const std::vector<std::uint64_t> keys{3, 6, 9};
  std::vector<float> values(keys.size() * 2, -7.0f);
  const auto refs = table.read(keys.data(), keys.size(), values.data());
  CHECK(values == table.pull(keys));
  REQUIRE(refs.size() == 3);
  CHECK(refs[0] != kNoRow);
  CHECK(refs[1] == kNoRow);
  CHECK(refs[2] != kNoRow);
  CHECK(refs[0] != refs[2]);
}

TEST_CASE("a push through the rows a read found equals one that looks every key up") {
  for (const update_rule rule : {update_rule::sgd, update_rule::adagrad}) {
    CAPTURE(to_string(rule));
    sparse_table looked_up(spec_of(1u << 20, 3, rule));
    sparse_table through_refs(spec_of(1u << 20, 3, rule));
    std::vector<std::uint64_t> held;
    for (std::uint64_t k = 0; k < 600; k += 2) held.push_back(3 * k);
    for (sparse_table* t : {&looked_up, &through_refs})
      REQUIRE_FALSE(t->push(gradient_of(held, 3, 0.25f), 0.1f));
    const auto keys = every_third(600);
    std::vector<float> values(keys.size() * 3);
    const auto refs = through_refs.read(keys.data(), keys.size(), values.data());
    // Between the read and the push another push creates some of the rows
    // the read did not find, and grows the hash slots past where they were.
    std::vector<std::uint64_t> others{3, 9, 15};
    for (std::uint64_t k = 5000; k < 9000; ++k) others.push_back(k * 7);
    for (sparse_table* t : {&looked_up, &through_refs})
      REQUIRE_FALSE(t->push(gradient_of(others, 3, 1.5f), 0.2f));
    const auto g = gradient_of(keys, 3, 0.75f);
    REQUIRE_FALSE(looked_up.push(g, {0.05f, 4}));
    through_refs.apply(keys.data(), refs.data(), keys.size(), g.values.data(), {0.05f, 4});
    CHECK(looked_up.rows_held() == through_refs.rows_held());
    const auto a = looked_up.dump(0, 1u << 20);
    const auto b = through_refs.dump(0, 1u << 20);
    CHECK(a.keys == b.keys);
    CHECK(a.values == b.values);
    CHECK(a.accumulators == b.accumulators);
  }
}

}  // namespace downpour::test_sparse_table
