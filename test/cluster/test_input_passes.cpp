// A pass is a pass: with streamed input, one pass of the cluster trains on
// every example of the training files exactly once, whatever the mode and
// the number of workers, over files of uneven sizes; the job ends when the
// workers' passes are done.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "data/batch_record.hpp"
#include "subprocess.hpp"
#include "test_jobs.hpp"

namespace test_input_passes {

using namespace downpour;
using namespace downpour::testing;

namespace {

// Two files of uneven sizes, 137 and 251 examples, with a blank and a
// comment line here and there (each example's one feature is its number):
// 1 and 2 workers share them by file, 3 by blocks of lines.
struct example_files {
  temp_dir dir{"passes"};
  std::map<std::string, int> lines;  // "FILE:OFFSET" of every example, from 0 times
  example_files() {
    int id = 0;
    int file = 0;
    for (int count : {137, 251}) {
      std::ofstream out(dir / ("part-" + std::to_string(file) + ".libsvm"));
      std::uint64_t offset = 0;
      for (int i = 0; i < count; ++i, ++id) {
        const std::string line = std::to_string(id % 2) + " " + std::to_string(id) + ":1\n";
        lines[std::to_string(file) + ":" + std::to_string(offset)] = 0;
        out << line;
        offset += line.size();
        if (i % 13 == 5) {
          out << "# a comment\n\n";
          offset += 13;
        }
      }
      ++file;
    }
    std::ofstream(dir / "test.libsvm") << "1 3:1\n0 4:1\n1 5:1\n";
  }
};

const example_files& files() {
  static const example_files f;
  return f;
}

options stream_job(const std::string& dir, std::size_t workers, train_mode mode) {
  options o = local_job(2, workers, 100000, dir + "/ckpt");
  o.model = "logreg";
  o.sparse_rows = 4096;
  o.data_format = data_format_kind::libsvm;
  o.train_file = files().dir / "part-*.libsvm";
  o.test_file = files().dir / "test.libsvm";
  o.validation_size = 0;
  o.batch_size = 10;
  o.passes = 1;
  o.shuffle_buffer = 50;
  o.mode = mode;
  o.seed = 3;
  return o;
}

// How often each example was in a pushed batch, by the workers' records.
std::map<std::string, int> trained(const std::string& record_dir, std::size_t workers) {
  auto seen = files().lines;
  for (std::size_t w = 0; w < workers; ++w) {
    std::ifstream in(record_dir + "/batches-" + std::to_string(w) + ".txt");
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string worker, stamp, origin;
      fields >> worker >> stamp;
      while (fields >> origin) ++seen[origin];
    }
  }
  return seen;
}

}  // namespace

TEST_CASE("one pass trains on every example exactly once in every mode with 1, 2 and 3 workers") {
  for (auto mode : {train_mode::async, train_mode::sync, train_mode::ssp}) {
    for (std::size_t workers : {1, 2, 3}) {
      CAPTURE(to_string(mode));
      CAPTURE(workers);
      temp_dir dir("passes-job");
      const auto o = stream_job(dir.str(), workers, mode);
      ::setenv(record_batches_env, (dir / "records").c_str(), 1);
      auto result = run_local_job(o);
      ::unsetenv(record_batches_env);
      REQUIRE(result);
      CHECK(result->summary.status == job_status::completed);
      CHECK(result->summary.global_step < o.last_step);
      for (const auto& [example, times] : trained(dir / "records", workers)) {
        CAPTURE(example);
        CHECK(times == 1);
      }
    }
  }
}

}  // namespace test_input_passes
