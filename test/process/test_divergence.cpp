// A diverging job is a failure, not a retry loop: the first batch with a
// non-finite loss or gradient (or the first beyond --max-bad-batches) ends
// the job with one ERROR line, exit 3, summary.json status "diverged", and
// no checkpoint of the diverged model; the checkpoints before stay.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "protocol/messages.hpp"
#include "cluster_procs.hpp"
#include "model/update.hpp"
#include "runtime/files/checkpoint.hpp"
#include "runtime/node/node.hpp"
#include "test_jobs.hpp"

namespace test_divergence {

using namespace downpour;
using namespace downpour::testing;
using namespace std::chrono_literals;

namespace {

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Only the start checkpoint exists, and it is finite.
void check_only_good_checkpoints(const temp_dir& dir) {
  std::ostringstream warnings;
  auto newest = find_newest_checkpoint(dir.str(), warnings);
  REQUIRE(newest);
  CHECK(newest->data.global_step == 0);
  CHECK(all_finite(newest->data.params.data(), newest->data.params.size()));
}

void check_diverged_chief(process& chief, const temp_dir& dir) {
  const auto out = chief.output();
  CAPTURE(out);
  CHECK(count_of(out, " ERROR ") == 1);
  CHECK(out.find("ERROR the job diverged: worker ") != std::string::npos);
  const auto lr = out.find("with learning rate ");
  REQUIRE(lr != std::string::npos);
  CHECK(std::stod(out.substr(lr + 19)) > 0.99e12);  // 1e12 after a few steps of decay
  CHECK(out.find("try a smaller --learning-rate") != std::string::npos);
  CHECK(summary_field(read_text(dir / "summary.json"), "status") == "diverged");
  check_only_good_checkpoints(dir);
}

}  // namespace

TEST_CASE("a job with a learning rate of 1e12 fails as diverged, in process") {
  temp_dir dir("diverge-inproc");
  auto opts = local_job(2, 2, 200, dir.str());
  opts.learning_rate = 1e12f;
  opts.pipeline = true;
  auto got = run_local_job(opts);
  REQUIRE(!got);
  CHECK(got.error() == errc::diverged);
  check_only_good_checkpoints(dir);
}

TEST_CASE("--learning-rate=1e12 --last-step=200 ends promptly with exit 3 and status diverged") {
  temp_dir dir("diverge-local");
  const auto started = std::chrono::steady_clock::now();
  process job({DOWNPOUR_BINARY, "--learning-rate=1e12", "--last-step=200", "--quiet",
               "--checkpoint-dir=" + dir.str()},
              dir / "job.log");
  CHECK(job.wait(60s) == exit_diverged);
  MESSAGE("diverged job ended after " << seconds_since(started) << " s");
  check_diverged_chief(job, dir);
}

TEST_CASE("sync mode: a diverging job ends with exit 3") {
  temp_dir dir("diverge-sync");
  process job({DOWNPOUR_BINARY, "--mode=sync", "--learning-rate=1e12", "--last-step=200",
               "--quiet", "--checkpoint-dir=" + dir.str()},
              dir / "job.log");
  CHECK(job.wait(60s) == exit_diverged);
  check_diverged_chief(job, dir);
}

TEST_CASE("--max-bad-batches skips that many bad batches before the job fails") {
  temp_dir dir("diverge-skip");
  process job({DOWNPOUR_BINARY, "--learning-rate=1e12", "--last-step=200", "--quiet",
               "--max-bad-batches=3", "--checkpoint-dir=" + dir.str()},
              dir / "job.log");
  CHECK(job.wait(60s) == exit_diverged);
  const auto out = job.output();
  CAPTURE(out);
  CHECK(count_of(out, "; batch skipped (") == 3);
  CHECK(out.find("batch skipped (3 of at most 3)") != std::string::npos);
  CHECK(count_of(out, " ERROR ") == 1);
}

TEST_CASE("a diverging cluster of processes ends every node with exit 3") {
  temp_dir dir("diverge-procs");
  auto c = make_cluster(2, 2, dir, {"--learning-rate=1e12", "--last-step=200"});
  two_by_two nodes(c, dir);
  auto& [ps0, ps1, chief, w1] = nodes;
  for (auto* p : {&chief, &ps0, &ps1}) {
    CAPTURE(p->output());
    CHECK(p->wait(60s) == exit_diverged);
  }
  // The job diverges at its first steps: worker 1 may still be connecting
  // then, and a worker that never joined cannot learn why the chief is gone.
  CAPTURE(w1.output());
  const int w1_code = w1.wait(60s);
  if (w1_code != exit_diverged) {
    CHECK(w1_code == 1);
    // It names the peer that ended under it: the chief, or a ps it greeted.
    const auto out = w1.output();
    CHECK((out.find("cannot reach the chief (worker 0)") != std::string::npos ||
           out.find("cannot reach ps ") != std::string::npos));
    CHECK(out.find("global_step:") == std::string::npos);  // it never trained
  }
  check_diverged_chief(chief, dir);
}

}  // namespace test_divergence
