// Sharding, shuffling, passes and positions of streamed input: over one pass
// the workers read every example exactly once, whatever the files; a
// stream restarted at its position goes on exactly as it would have; the
// background reader hands out the same batches, and bad data mid-stream is
// one error naming the file, line and column.
#include <doctest/doctest.h>
#include <zlib.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "data/background_batches.hpp"
#include "data/example_stream.hpp"
#include "reporting/status_json.hpp"
#include "runtime/cli/status_text.hpp"
#include "subprocess.hpp"

namespace downpour::test_input_shards {
namespace {

using testing::temp_dir;

// Example i is "label i:1" (its feature names it), with a blank and a
// comment line here and there.
std::string examples_text(std::uint64_t first, std::uint64_t count) {
  std::string text;
  for (std::uint64_t i = first; i < first + count; ++i) {
    text += std::to_string(i % 2) + " " + std::to_string(i) + ":1\n";
    if (i % 17 == 3) text += "\n# a comment\n";
  }
  return text;
}

std::string write_text(const std::string& path, const std::string& text, bool gzip) {
  if (!gzip) {
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
  return path;
}

// Files of the given example counts, the i-th gzip when gzip[i]; examples
// numbered on from file to file.
std::vector<data_file> make_files(const temp_dir& dir, const std::vector<std::uint64_t>& counts,
                                  const std::vector<bool>& gzip) {
  std::string spec;
  std::uint64_t first = 0;
  for (std::size_t f = 0; f < counts.size(); ++f) {
    const bool gz = f < gzip.size() && gzip[f];
    const auto path = dir / ("part-" + std::to_string(f) + (gz ? ".gz" : ".libsvm"));
    write_text(path, examples_text(first, counts[f]), gz);
    spec += (spec.empty() ? "" : ",") + path;
    first += counts[f];
  }
  return list_data_files(spec);
}

stream_config config(std::size_t batch, std::size_t buffer, std::uint64_t passes,
                     std::uint64_t seed) {
  stream_config c;
  c.batch_size = batch;
  c.shuffle_buffer = buffer;
  c.passes = passes;
  c.seed = seed;
  return c;
}

// Each example's feature: its number.
std::vector<std::uint64_t> ids_of(const batch& b) {
  std::vector<std::uint64_t> ids;
  for (std::size_t r = 0; r < b.size; ++r) ids.push_back(b.keys[b.offsets[r]]);
  return ids;
}

// How often each example was handed out over every worker's stream.
std::map<std::uint64_t, int> read_by_all(const std::vector<shard_plan>& plans,
                                         const stream_config& c) {
  std::map<std::uint64_t, int> seen;
  for (std::size_t k = 0; k < plans.size(); ++k) {
    auto ck = c;
    ck.seed = mix_seed(c.seed, k);
    example_stream s(plans[k], ck, {});
    batch b;
    while (s.next(b))
      for (auto id : ids_of(b)) ++seen[id];
  }
  return seen;
}

void check_each_once(const std::map<std::uint64_t, int>& seen, std::uint64_t total, int times) {
  CHECK(seen.size() == total);
  for (const auto& [id, n] : seen) {
    CAPTURE(id);
    REQUIRE(n == times);
  }
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const data_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("over one pass every example goes to exactly one worker, counted or cut blind") {
  temp_dir dir("shards");
  const std::vector<std::uint64_t> counts = {7, 100, 251};
  for (const auto& gzip : {std::vector<bool>{}, std::vector<bool>{false, true, true}}) {
    const auto files = make_files(dir, counts, gzip);
    for (std::size_t workers : {1, 2, 3, 4, 5}) {
      for (std::uint64_t counted : {small_data_bytes, std::uint64_t{0}}) {
        CAPTURE(workers);
        CAPTURE(counted);
        shard_request r{files, workers};
        r.counted_up_to = counted;
        r.min_block = 64;
        const auto plans = plan_shards(r);
        check_each_once(read_by_all(plans, config(10, 37, 1, 5)), 358, 1);
      }
    }
  }
}

TEST_CASE("two passes hand out every example twice, and the stream then ends") {
  temp_dir dir("shards");
  const auto plans = plan_shards({make_files(dir, {50, 13}, {}), 2});
  check_each_once(read_by_all(plans, config(8, 20, 2, 1)), 63, 2);
}

TEST_CASE("the examples held out for validation are never trained on") {
  temp_dir dir("shards");
  const auto files = make_files(dir, {30, 30}, {});
  // Examples 0..4, a blank and a comment line end at byte 43 of file 0.
  shard_request r{files, 3};
  r.first_byte = 43;
  std::map<std::uint64_t, int> seen = read_by_all(plan_shards(r), config(4, 10, 1, 2));
  CHECK(seen.size() == 55);
  CHECK(seen.count(4) == 0);
  CHECK(seen.count(5) == 1);
}

TEST_CASE("a worker that would get no example is refused at the start, naming the counts") {
  temp_dir dir("shards");
  const auto files = make_files(dir, {2}, {});
  CHECK(error_of([&] { plan_shards({files, 3}); }) ==
        "data: the training files hold 2 example lines, fewer than the 3 workers: worker 2 of 3 "
        "would train on none (use at most 2 workers, or more data)");
}

TEST_CASE("the shuffle follows the seed: the same seed the same order, another pass another") {
  temp_dir dir("shards");
  const auto plans = plan_shards({make_files(dir, {300}, {}), 1});
  auto first_batches = [&](std::uint64_t seed, std::uint64_t skip_passes) {
    read_position at;
    at.pass = skip_passes;
    example_stream s(plans[0], config(300, 64, 0, seed), at);
    batch b;
    s.next(b);
    return ids_of(b);
  };
  const auto a = first_batches(7, 0);
  CHECK(a == first_batches(7, 0));
  CHECK(a != first_batches(8, 0));
  CHECK(a != first_batches(7, 1));
  std::vector<std::uint64_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  CHECK(sorted != a);
  // No shuffle buffer and the files in order: the file order.
  auto c = config(300, 1, 1, 7);
  c.order = unit_order::in_files;
  example_stream s(plans[0], c, {});
  batch b;
  REQUIRE(s.next(b));
  CHECK(ids_of(b) == sorted);
}

TEST_CASE("a stream started at a saved position goes on exactly as the one it was saved from") {
  temp_dir dir("shards");
  for (const auto& gzip : {std::vector<bool>{}, std::vector<bool>{true, false}}) {
    shard_request r{make_files(dir, {120, 77}, gzip), 2};
    r.counted_up_to = 0;  // blind blocks
    r.min_block = 100;
    const auto plans = plan_shards(r);
    const auto c = config(7, 25, 3, 11);
    example_stream whole(plans[1], c, {});
    std::vector<std::vector<std::uint64_t>> batches;
    std::vector<read_position> positions;
    for (batch b; whole.next(b);) {
      batches.push_back(ids_of(b));
      positions.push_back(whole.position());
    }
    for (std::size_t cut : {std::size_t{0}, std::size_t{3}, std::size_t{4}, batches.size() / 2,
                            batches.size() - 2}) {
      CAPTURE(cut);
      example_stream resumed(plans[1], c, positions[cut]);
      CHECK(resumed.resumed());
      std::size_t i = cut + 1;
      for (batch b; resumed.next(b); ++i) {
        REQUIRE(i < batches.size());
        CHECK(ids_of(b) == batches[i]);
        CHECK(resumed.position().batches == positions[i].batches);
      }
      CHECK(i == batches.size());
    }
  }
}

TEST_CASE("the background reader hands out the stream's batches, then its error") {
  temp_dir dir("shards");
  const auto files = make_files(dir, {40}, {});
  const auto plans = plan_shards({files, 1});
  example_stream direct(plans[0], config(6, 16, 2, 3), {});
  background_batches ahead(std::make_unique<example_stream>(plans[0], config(6, 16, 2, 3),
                                                            read_position{}),
                           3);
  for (batch b; direct.next(b);) {
    const batch* got = ahead.next();
    REQUIRE(got);
    CHECK(ids_of(*got) == ids_of(b));
    CHECK(ahead.position().batches == direct.position().batches);
  }
  CHECK(ahead.next() == nullptr);

  // Line 31 is bad: the batches before it, then the error, found when the
  // reader got there, wherever its block began.
  std::string text = examples_text(0, 30) + "1 5:1 x\n" + examples_text(30, 10);
  write_text(files[0].path, text, false);
  shard_request r{list_data_files(files[0].path), 1};
  r.counted_up_to = 0;
  r.min_block = 64;
  background_batches bad(std::make_unique<example_stream>(plan_shards(r)[0], config(5, 1, 1, 3),
                                                          read_position{}),
                         2);
  const std::string expected = "data: " + files[0].path + ":35:7: missing ':' in 'x' (expected index:value)";
  CHECK(error_of([&] { while (bad.next()) {} }) == expected);
  CHECK(error_of([&] { bad.next(); }) == expected);
}

TEST_CASE("status shows where each worker's reading stands, in text and JSON") {
  status_facts f;
  read_position at;
  at.pass = 1;
  at.examples = 4800;
  at.batches = 143;
  merge_position(f.positions, 1, at);
  at.batches = 100;  // older: not taken
  merge_position(f.positions, 1, at);
  merge_position(f.positions, 0, at);
  REQUIRE(f.positions.size() == 2);
  const std::string text = format_status(f);
  CHECK(text.find("input: worker 0 in pass 2 after 4800 examples of it (100 batches in all)\n") !=
        std::string::npos);
  CHECK(text.find("input: worker 1 in pass 2 after 4800 examples of it (143 batches in all)\n") !=
        std::string::npos);
  CHECK(format_status(parse_status_json(status_json(f))) == text);
}

}  // namespace downpour::test_input_shards
