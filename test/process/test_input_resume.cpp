// A resumed job reads on where its checkpoint says each worker stood: after
// SIGTERM nothing of the pass is repeated or skipped; after kill -9 the
// checkpoint's positions are within the pushes in flight of its step, and
// the resumed job reads on from exactly there. Bad data met mid-stream
// stops the job as a signal does, naming the file, line and column.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "data/batch_record.hpp"
#include "log_lines.hpp"
#include "runtime/files/checkpoint.hpp"
#include "subprocess.hpp"

namespace test_input_resume {

using namespace downpour;
using namespace downpour::testing;
using namespace std::chrono_literals;

namespace {

constexpr std::size_t kWorkers = 2;

// Two files of 120000 and 80000 examples (each example's feature its number
// modulo 5000): 20000 steps of 10, long enough to stop in the middle.
struct example_files {
  temp_dir dir{"resume-data"};
  std::map<std::string, int> lines;  // "FILE:OFFSET" of every example, from 0 times
  example_files() {
    int id = 0;
    int file = 0;
    for (int count : {120000, 80000}) {
      std::ofstream out(dir / ("part-" + std::to_string(file) + ".libsvm"));
      std::uint64_t offset = 0;
      for (int i = 0; i < count; ++i, ++id) {
        const std::string line = std::to_string(id % 2) + " " + std::to_string(id % 5000) + ":1\n";
        lines[std::to_string(file) + ":" + std::to_string(offset)] = 0;
        out << line;
        offset += line.size();
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

std::vector<std::string> job_args(const std::string& ckpt, std::vector<std::string> extra) {
  std::vector<std::string> a = {DOWNPOUR_BINARY,
                                "--model=logreg",
                                "--data-format=libsvm",
                                "--train-file=" + files().dir / "part-*.libsvm",
                                "--test-file=" + files().dir / "test.libsvm",
                                "--sparse-rows=8192",
                                "--validation-size=0",
                                "--batch-size=10",
                                "--passes=1",
                                "--shuffle-buffer=500",
                                "--last-step=1000000",
                                "--quiet",
                                "--worker-hosts=127.0.0.1:1,127.0.0.1:2",
                                "--checkpoint-dir=" + ckpt};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

// A job whose workers record their pushed batches into record_dir.
struct recorded_job {
  recorded_job(const std::vector<std::string>& args, const std::string& record_dir,
               const std::string& log) {
    ::setenv(record_batches_env, record_dir.c_str(), 1);
    job = std::make_unique<process>(args, log);
    ::unsetenv(record_batches_env);
  }
  std::unique_ptr<process> job;
};

// The examples of each worker's recorded batches, batch by batch.
std::vector<std::vector<std::vector<std::string>>> records(const std::string& dir) {
  std::vector<std::vector<std::vector<std::string>>> out(kWorkers);
  for (std::size_t w = 0; w < kWorkers; ++w) {
    std::ifstream in(dir + "/batches-" + std::to_string(w) + ".txt");
    for (std::string line; std::getline(in, line);) {
      std::istringstream fields(line);
      std::string worker, stamp, origin;
      fields >> worker >> stamp;
      out[w].emplace_back();
      while (fields >> origin) out[w].back().push_back(origin);
    }
  }
  return out;
}

// Adds the first `batches[w]` batches of each worker's records to seen.
void count(std::map<std::string, int>& seen,
           const std::vector<std::vector<std::vector<std::string>>>& recs,
           const std::vector<std::size_t>& batches) {
  for (std::size_t w = 0; w < recs.size(); ++w)
    for (std::size_t b = 0; b < std::min(batches[w], recs[w].size()); ++b)
      for (const auto& origin : recs[w][b]) ++seen[origin];
}

void check_each_once(const std::map<std::string, int>& seen) {
  CHECK(seen.size() == files().lines.size());
  for (const auto& [example, times] : seen) {
    CAPTURE(example);
    REQUIRE(times == 1);
  }
}

bool past_step(const std::string& out, std::int64_t step) {
  return newest_progress_step(out) >= step;
}

bool saved_past(const std::string& out, std::int64_t step) {
  return newest_saved_step(out) >= step;
}

const std::vector<std::size_t> kAll(kWorkers, ~std::size_t{0});

}  // namespace

TEST_CASE("a job stopped mid-pass and resumed trains every example of the pass exactly once") {
  temp_dir dir("resume-stop");
  const auto args = job_args(dir / "ckpt", {"--save-checkpoint-secs=0", "--log-every=100"});
  recorded_job first(args, dir / "rec1", dir / "first.log");
  REQUIRE(first.job->wait_until([](const std::string& out) { return past_step(out, 200); }, 120s));
  first.job->kill(SIGTERM);
  REQUIRE(first.job->wait(60s) == 4);
  recorded_job second(args, dir / "rec2", dir / "second.log");
  REQUIRE(second.job->wait(120s) == 0);
  CHECK(second.job->output().find("reads on in pass 1 after") != std::string::npos);
  auto seen = files().lines;
  count(seen, records(dir / "rec1"), kAll);
  count(seen, records(dir / "rec2"), kAll);
  check_each_once(seen);
}

TEST_CASE(
    "a killed job's checkpoint holds positions within the pushes in flight, and the job reads on "
    "from them") {
  temp_dir dir("resume-kill");
  const auto args = job_args(dir / "ckpt", {"--save-checkpoint-secs=0", "--save-checkpoint-steps=40",
                                            "--log-every=1000000"});
  recorded_job first(args, dir / "rec1", dir / "first.log");
  REQUIRE(first.job->wait_until([](const std::string& out) { return saved_past(out, 80); }, 120s));
  first.job->kill(SIGKILL);
  first.job->wait(60s);
  std::ostringstream warnings;
  const auto found = find_newest_checkpoint(dir / "ckpt", warnings);
  REQUIRE(found);
  const checkpoint& c = found->data;
  REQUIRE(c.global_step > 0);
  REQUIRE(c.global_step < 20000);  // killed in the middle of the pass
  // A worker that has pushed nothing yet has no position (none read).
  REQUIRE(!c.positions.empty());
  std::vector<std::size_t> batches(kWorkers, 0);
  std::uint64_t sum = 0;
  for (const auto& p : c.positions) {
    REQUIRE(p.worker < kWorkers);
    batches[p.worker] = static_cast<std::size_t>(p.at.batches);
    sum += p.at.batches;
  }
  // Each shard applied exactly global_step pushes; a push some shard had
  // applied and another not counts as done: at most one per worker here.
  MESSAGE("checkpoint at step " << c.global_step << ": positions count " << sum << " batches");
  CHECK(sum >= static_cast<std::uint64_t>(c.global_step));
  CHECK(sum <= static_cast<std::uint64_t>(c.global_step) + kWorkers);
  recorded_job second(args, dir / "rec2", dir / "second.log");
  REQUIRE(second.job->wait(120s) == 0);
  auto seen = files().lines;
  count(seen, records(dir / "rec1"), batches);
  count(seen, records(dir / "rec2"), kAll);
  check_each_once(seen);
}

TEST_CASE("a bad line in the middle of a file stops the job with a checkpoint, naming the line") {
  temp_dir dir("resume-bad");
  {
    std::ofstream out(dir / "bad.libsvm");
    for (int i = 0; i < 3000; ++i) out << (i % 2) << " " << i << ":1\n";
    out << "1 7:1 oops\n";
    for (int i = 0; i < 3000; ++i) out << (i % 2) << " " << i << ":1\n";
  }
  process job({DOWNPOUR_BINARY, "--model=logreg", "--data-format=libsvm",
               "--train-file=" + dir / "bad.libsvm", "--test-file=" + files().dir / "test.libsvm",
               "--sparse-rows=8192", "--validation-size=0", "--passes=1", "--last-step=100000",
               "--shuffle-buffer=100", "--quiet", "--checkpoint-dir=" + dir / "ckpt"},
              dir / "job.log");
  CHECK(job.wait(120s) == 4);
  const auto out = job.output();
  const std::string error = "data: " + dir / "bad.libsvm" + ":3001:7: missing ':' in 'oops' (expected index:value)";
  CHECK(out.find("ERROR " + error) != std::string::npos);
  CHECK(out.find("stopped by a data error on worker ") != std::string::npos);
  std::ifstream summary(dir / "ckpt/summary.json");
  const std::string text((std::istreambuf_iterator<char>(summary)), {});
  CHECK(text.find("\"status\": \"stopped\"") != std::string::npos);
  std::ostringstream warnings;
  CHECK(find_newest_checkpoint(dir / "ckpt", warnings));
  // eval reads the test file alone: no training file.
  process eval({DOWNPOUR_BINARY, "eval", "--model=logreg", "--data-format=libsvm",
                "--test-file=" + files().dir / "test.libsvm", "--sparse-rows=8192",
                "--checkpoint-dir=" + dir / "ckpt"},
               dir / "eval.log");
  CHECK(eval.wait(60s) == 0);
  CHECK(eval.output().find(" test_examples=3\n") != std::string::npos);
}

}  // namespace test_input_resume
