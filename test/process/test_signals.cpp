// SIGTERM and SIGINT end a job cleanly: the chief saves a checkpoint at the
// step where the job stopped, writes summary.json with status "stopped",
// every node exits 4, and the same command resumes at exactly that step. A
// worker told to stop leaves the job, the others train on; a ps told to stop
// asks the chief to stop the job; a second signal exits at once.
#include <doctest/doctest.h>
#include <httplib.h>

#include <fstream>
#include <memory>
#include <sstream>

#include "cluster_procs.hpp"
#include "runtime/files/checkpoint.hpp"
#include "runtime/node/signals.hpp"
#include "runtime/net/ports.hpp"

namespace test_signals {

using namespace downpour;
using namespace downpour::testing;
using namespace std::chrono_literals;

namespace {

std::vector<std::string> local_args(const temp_dir& dir, std::int64_t last_step,
                                    std::vector<std::string> extra = {}) {
  std::vector<std::string> a = {DOWNPOUR_BINARY, "--last-step=" + std::to_string(last_step),
                                "--log-every=20", "--save-checkpoint-secs=0", "--quiet",
                                "--checkpoint-dir=" + dir.str()};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

// What a stopped job leaves: the stop line, summary.json and the checkpoint
// of exactly that step, which the index names as the newest.
std::int64_t check_stopped(const std::string& chief_output, const temp_dir& dir) {
  CAPTURE(chief_output);
  const auto step = stopped_step(chief_output);
  REQUIRE(step > 0);
  const auto summary = read_text(dir / "summary.json");
  CAPTURE(summary);
  CHECK(summary_field(summary, "status") == "stopped");
  CHECK(summary_field(summary, "global_step") == std::to_string(step));
  CHECK(summary_field(summary, "checkpoint") == dir / checkpoint_name(step));
  CHECK(read_checkpoint(dir / checkpoint_name(step)).global_step == step);
  CHECK(chief_output.find("final: ") == std::string::npos);
  return step;
}

// The same job resumed: restored at exactly the stop step, ending at last.
void check_resumes(const std::vector<std::string>& args, const temp_dir& dir, std::int64_t step,
                   std::int64_t last) {
  process again(args, dir / "again.log");
  CHECK(again.wait(300s) == exit_completed);
  const auto out = again.output();
  CAPTURE(out);
  CHECK(restored_step(out) == step);
  CHECK(out.find("final: global_step=" + std::to_string(last) + " ") != std::string::npos);
  CHECK(summary_field(read_text(dir / "summary.json"), "status") == "completed");
}

}  // namespace

TEST_CASE("SIGTERM to a local job saves a checkpoint at the stop step, exits 4 and the same "
          "command resumes there") {
  temp_dir dir("sigterm-local");
  const std::int64_t last = 100000;
  auto args = local_args(dir, last);
  process job(args, dir / "job.log");
  REQUIRE(job.wait_for_output("global_step:", 120s));
  const auto signalled = std::chrono::steady_clock::now();
  job.kill(SIGTERM);
  const int code = job.wait(60s);
  const double stop_s = seconds_since(signalled);
  MESSAGE("a local job (2 ps, 2 workers) stopped " << stop_s << " s after SIGTERM");
  CHECK(code == exit_stopped);
  CHECK(stop_s < scaled(std::chrono::duration<double>(10.0)).count());
  const auto step = check_stopped(job.output(), dir);
  CHECK(step < last);
  // The same command again, with a last step near the stop one so that the
  // test stays short: it starts at exactly the stop step.
  args[1] = "--last-step=" + std::to_string(step + 200);
  check_resumes(args, dir, step, step + 200);
}

TEST_CASE("SIGINT stops a sync job at one step on every shard") {
  temp_dir dir("sigint-sync");
  auto args = local_args(dir, 100000, {"--mode=sync"});
  process job(args, dir / "job.log");
  REQUIRE(job.wait_for_output("global_step:", 120s));
  job.kill(SIGINT);
  CHECK(job.wait(60s) == exit_stopped);
  const auto step = check_stopped(job.output(), dir);
  args[1] = "--last-step=" + std::to_string(step + 60);
  check_resumes(args, dir, step, step + 60);
}

TEST_CASE("a second signal while stopping exits at once and leaves the checkpoints saved before "
          "whole") {
  temp_dir dir("sigint-twice");
  // A wide model makes the stop checkpoint large (about 50 MB), so the
  // second signal arrives while it is being written.
  auto args = local_args(dir, 100000,
                         {"--hidden-units=8000", "--ps-hosts=127.0.0.1:1", "--worker-hosts=127.0.0.1:2"});
  process job(args, dir / "job.log");
  REQUIRE(job.wait_for_output("global_step:", 300s));
  job.kill(SIGINT);
  REQUIRE(job.wait_for_output("stop_supervisor: stopping (SIGINT", 60s));
  job.kill(SIGINT);
  CHECK(job.wait(60s) == 128 + SIGINT);
  CHECK(job.output().find("SIGINT again while stopping: exiting at once") != std::string::npos);
  // Whatever the index names reads back whole; the start checkpoint is there.
  std::ostringstream warnings;
  auto newest = find_newest_checkpoint(dir.str(), warnings);
  REQUIRE(newest);
  CHECK(warnings.str().empty());
  CHECK(read_checkpoint(dir / "model.ckpt-0").global_step == 0);
}

TEST_CASE("SIGTERM to the chief of a process cluster stops every node with exit 4; restarted, "
          "it resumes at the stop step") {
  temp_dir dir("sigterm-chief");
  auto c = make_cluster(2, 2, dir, {"--last-step=100000", "--log-every=20",
                                    "--save-checkpoint-secs=0"});
  two_by_two nodes(c, dir);
  auto& [ps0, ps1, chief, w1] = nodes;
  REQUIRE(w1.wait_for_output("global_step:", 120s));
  const auto signalled = std::chrono::steady_clock::now();
  chief.kill(SIGTERM);
  for (auto* p : nodes.all()) {
    CAPTURE(p->output());
    CHECK(p->wait(60s) == exit_stopped);
  }
  MESSAGE("a cluster of 4 processes ended " << seconds_since(signalled) << " s after SIGTERM");
  const auto step = check_stopped(chief.output(), dir);
  c.common[0] = "--last-step=" + std::to_string(step + 200);
  process ps0b(c.node("ps", 0), dir / "ps0b.log");
  process ps1b(c.node("ps", 1), dir / "ps1b.log");
  process w1b(c.node("worker", 1), dir / "w1b.log");
  check_resumes(c.node("worker", 0), dir, step, step + 200);
  for (auto* p : {&w1b, &ps0b, &ps1b}) CHECK(p->wait(120s) == exit_completed);
}

TEST_CASE("a worker told to stop leaves the job and the others train on to the exact last step") {
  temp_dir dir("sigterm-worker");
  auto c = make_cluster(2, 2, dir, {"--last-step=1500", "--log-every=20",
                                    "--save-checkpoint-secs=0"});
  two_by_two nodes(c, dir);
  auto& [ps0, ps1, chief, w1] = nodes;
  REQUIRE(w1.wait_for_output("global_step:", 120s));
  w1.kill(SIGTERM);
  CHECK(w1.wait(60s) == exit_stopped);
  CHECK(w1.output().find("this worker leaves the job after the step in hand") != std::string::npos);
  for (auto* p : {&chief, &ps0, &ps1}) {
    CAPTURE(p->output());
    CHECK(p->wait(300s) == exit_completed);
  }
  CHECK(chief.output().find("final: global_step=1500 ") != std::string::npos);
  CHECK(summary_field(read_text(dir / "summary.json"), "status") == "completed");
}

TEST_CASE("a ps told to stop asks the chief to stop the job with a checkpoint; every node exits 4") {
  temp_dir dir("sigterm-ps");
  auto c = make_cluster(2, 2, dir, {"--last-step=100000", "--log-every=20",
                                    "--save-checkpoint-secs=0"});
  two_by_two nodes(c, dir);
  auto& [ps0, ps1, chief, w1] = nodes;
  REQUIRE(w1.wait_for_output("global_step:", 120s));
  ps1.kill(SIGTERM);
  for (auto* p : {&ps1, &chief, &w1, &ps0}) {
    CAPTURE(p->output());
    CHECK(p->wait(60s) == exit_stopped);
  }
  CHECK(ps1.output().find("asking the chief to stop the job") != std::string::npos);
  CHECK(chief.output().find("stopping (SIGTERM on ps:1)") != std::string::npos);
  check_stopped(chief.output(), dir);
}

TEST_CASE("a resumed job appends to metrics.csv: one header, wall time going on") {
  temp_dir dir("metrics-append");
  auto args = local_args(dir, 100000);
  {
    process job(args, dir / "job.log");
    REQUIRE(job.wait_for_output("global_step:", 120s));
    job.kill(SIGTERM);
    REQUIRE(job.wait(60s) == exit_stopped);
  }
  const auto step = stopped_step(read_text(dir / "job.log"));
  REQUIRE(step > 0);
  const auto before = read_text(dir / "metrics.csv");
  args[1] = "--last-step=" + std::to_string(step + 300);
  process again(args, dir / "again.log");
  REQUIRE(again.wait(300s) == exit_completed);
  const auto after = read_text(dir / "metrics.csv");
  CAPTURE(after);
  REQUIRE(after.compare(0, before.size(), before) == 0);
  std::istringstream rows(after);
  std::string line;
  int headers = 0;
  double last_wall = -1.0;
  std::int64_t last_row_step = -1;
  while (std::getline(rows, line)) {
    if (line.rfind("wall_s,", 0) == 0) {
      ++headers;
      continue;
    }
    const double wall = std::stod(line);
    CHECK(wall >= last_wall);
    last_wall = wall;
    last_row_step = std::stoll(line.substr(line.find(',') + 1));
  }
  CHECK(headers == 1);
  CHECK(last_row_step == step + 300);
}

TEST_CASE("SIGTERM while every batch is skipped as non-finite stops the job at once with exit 4 "
          "and the checkpoint of the stop step; meanwhile the loss reads NaN, not 0") {
  temp_dir dir("sigterm-bad-batches");
  const port_reservation metrics(1);
  // A learning rate that sends the parameters so far that every batch's
  // loss is non-finite, and room to skip such batches for ever.
  process job(local_args(dir, 1000000,
                         {"--learning-rate=1e12", "--max-bad-batches=1000000000",
                          "--metrics-port=" + std::to_string(metrics[0]), "--stop-grace=60"}),
              dir / "job.log");
  REQUIRE(job.wait_for_output("; batch skipped (200 of at most", 120s));
  httplib::Client http("127.0.0.1", metrics[0]);
  auto scraped = http.Get("/metrics");
  REQUIRE(scraped);
  CAPTURE(scraped->body);
  CHECK((scraped->body.find("\ndownpour_train_loss NaN\n") != std::string::npos ||
         scraped->body.find("\ndownpour_train_loss +Inf\n") != std::string::npos));
  CHECK(scraped->body.find("\ndownpour_bad_batches_skipped_total 0\n") == std::string::npos);
  CHECK(scraped->body.find("downpour_job_state{state=\"training\"} 1\n") != std::string::npos);
  const auto signalled = std::chrono::steady_clock::now();
  job.kill(SIGTERM);
  CHECK(job.wait(120s) == exit_stopped);
  const double stop_s = seconds_since(signalled);
  MESSAGE("a job skipping every batch stopped " << stop_s << " s after SIGTERM");
  CHECK(stop_s < scaled(std::chrono::duration<double>(10.0)).count());
  check_stopped(job.output(), dir);
}

TEST_CASE("SIGTERM to a chief waiting for a lost ps ends it within --stop-grace with exit 4, its "
          "newest checkpoint whole") {
  temp_dir dir("sigterm-waiting");
  auto c = make_cluster(1, 1, dir, {"--last-step=1000000", "--log-every=20",
                                    "--save-checkpoint-secs=0", "--connect-timeout=300",
                                    "--stop-grace=2"});
  process ps0(c.node("ps", 0), dir / "ps0.log");
  process chief(c.node("worker", 0), dir / "w0.log");
  REQUIRE(chief.wait_for_output("global_step:", 120s));
  ps0.kill(SIGKILL);
  REQUIRE(chief.wait_for_output("went down", 60s));
  const auto signalled = std::chrono::steady_clock::now();
  chief.kill(SIGTERM);
  CHECK(chief.wait(120s) == exit_stopped);
  const double stop_s = seconds_since(signalled);
  MESSAGE("a chief waiting for its ps stopped " << stop_s << " s after SIGTERM");
  CAPTURE(chief.output());
  CHECK(stop_s < scaled(std::chrono::duration<double>(12.0)).count());
  CHECK(chief.output().find("did not end this node within --stop-grace=2 s") != std::string::npos);
  std::ostringstream warnings;
  auto newest = find_newest_checkpoint(dir.str(), warnings);
  REQUIRE(newest);
  CHECK(warnings.str().empty());
}

}  // namespace test_signals
