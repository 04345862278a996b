// Issue 40's streamed SIGTERM and resume, as a new user tries it: 2 ps and 2
// worker processes, three libsvm files of 4000, 7000 and 9000 examples (two
// gzipped), each example with a feature of its own, one pass, a checkpoint
// every 40 steps; SIGTERM to every process near step 125, then the same
// command again. Every example must be trained exactly once: the workers'
// recorded batches of both runs hold each example once, and the final
// checkpoint holds the row of every example's feature (features hash into
// --sparse-rows rows, so some share one) and no other. One run in ten was
// reported to end with rows for only 8000 of the 20000 examples;
// test_stream_resume_30_runs (make test-long) runs this case 30 times.
#include <doctest/doctest.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <zlib.h>

#include "cluster_procs.hpp"
#include "data/batch_record.hpp"
#include "model/sparse_logreg.hpp"
#include "model/sparse_models.hpp"
#include "runtime/files/checkpoint.hpp"
#include "runtime/node/signals.hpp"

namespace test_stream_resume {

using namespace downpour;
using namespace downpour::testing;
using namespace std::chrono_literals;

namespace {

constexpr int kExamples = 20000;
constexpr std::uint64_t kRows = 32768;

// Example i's line has feature i alone; "FILE:OFFSET" of every example.
std::map<std::string, int> write_files(const temp_dir& dir) {
  std::map<std::string, int> lines;
  int id = 0, file = 0;
  for (int count : {4000, 7000, 9000}) {
    std::string text;
    for (int i = 0; i < count; ++i, ++id) {
      lines[std::to_string(file) + ":" + std::to_string(text.size())] = 0;
      text += std::to_string(id % 2) + " " + std::to_string(id) + ":1\n";
    }
    const auto path = dir / ("part-" + std::to_string(file) + ".libsvm");
    if (file == 0) {
      std::ofstream(path) << text;
    } else {  // a gzip file's offsets are those of its text
      gzFile gz = gzopen((path + ".gz").c_str(), "wb");
      REQUIRE(gz != nullptr);
      REQUIRE(gzwrite(gz, text.data(), static_cast<unsigned>(text.size())) ==
              static_cast<int>(text.size()));
      REQUIRE(gzclose(gz) == Z_OK);
    }
    ++file;
  }
  std::ofstream(dir / "test.libsvm") << "1 3:1\n0 4:1\n";
  return lines;
}

// c, once the processes started next record their batches into dir
// (data/batch_record.hpp; recorded_cluster unsets it again).
const cluster_args& recording_into(const cluster_args& c, const std::string& dir) {
  ::setenv(record_batches_env, dir.c_str(), 1);
  return c;
}

// A run of the cluster whose worker processes record into DIR/recRUN.
struct recorded_cluster {
  recorded_cluster(const cluster_args& c, const temp_dir& dir, const std::string& run)
      : nodes(recording_into(c, dir / ("rec" + run)), dir, {}, run) {
    ::unsetenv(record_batches_env);
  }
  two_by_two nodes;
};

void count_records(std::map<std::string, int>& seen, const std::string& dir) {
  for (int w = 0; w < 2; ++w) {
    std::ifstream in(dir + "/batches-" + std::to_string(w) + ".txt");
    for (std::string line; std::getline(in, line);) {
      std::istringstream fields(line);
      std::string worker, stamp, origin;
      fields >> worker >> stamp;
      while (fields >> origin) ++seen[origin];
    }
  }
}

}  // namespace

TEST_CASE("2 ps and 2 workers streaming three files, two gzipped, stopped with SIGTERM near step "
          "125 and started again with the same command, train every example exactly once") {
  temp_dir dir("stream-resume");
  auto seen = write_files(dir);
  REQUIRE(seen.size() == kExamples);
  const auto c = make_cluster(
      2, 2, dir / "ckpt",
      {"--model=logreg", "--data-format=libsvm", "--train-file=" + dir / "part-*",
       "--test-file=" + dir / "test.libsvm", "--sparse-rows=" + std::to_string(kRows), "--validation-size=0",
       "--passes=1", "--save-checkpoint-steps=40", "--save-checkpoint-secs=0",
       "--last-step=1000000", "--log-every=5", "--connect-timeout=30"});
  {
    recorded_cluster first(c, dir, "1");
    REQUIRE(first.nodes.chief.wait_until(
        [](const std::string& out) { return newest_progress_step(out) >= 125; }, 120s));
    for (auto* p : first.nodes.all()) p->kill(SIGTERM);
    for (auto* p : first.nodes.all()) {
      CAPTURE(p->output());
      CHECK(p->wait(60s) == exit_stopped);
    }
  }
  recorded_cluster second(c, dir, "2");
  for (auto* p : second.nodes.all()) {
    CAPTURE(p->output());
    CHECK(p->wait(180s) == exit_completed);
  }
  count_records(seen, dir / "rec1");
  count_records(seen, dir / "rec2");
  CHECK(seen.size() == kExamples);
  int twice = 0, never = 0;
  for (const auto& [example, times] : seen) {
    twice += times > 1;
    never += times == 0;
  }
  CHECK(twice == 0);
  CHECK(never == 0);
  std::ostringstream warnings;
  const auto found = find_newest_checkpoint(dir / "ckpt", warnings);
  REQUIRE(found);
  CAPTURE(second.nodes.chief.output());
  CAPTURE(found->path);
  // Features are hashed into the rows (docs/sparse.md): the rows of all of them.
  const sparse_logreg hashing(kRows, kFeatureHashSeed);
  std::set<std::uint64_t> rows;
  for (std::uint64_t f = 0; f < kExamples; ++f) rows.insert(hashing.row_of(f));
  CHECK(found->data.rows.keys == std::vector<std::uint64_t>(rows.begin(), rows.end()));
}

}  // namespace test_stream_resume
