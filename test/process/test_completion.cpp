// A job that completed is reported, not trained again, when its nodes are
// started again (a pod or unit restarted, a second `make run`): summary.json
// and metrics.csv stay as they were, every node exits 0 at once, and --fresh
// trains again.
#include <doctest/doctest.h>

#include "cluster_procs.hpp"
#include "runtime/node/signals.hpp"

namespace test_completion {

using namespace downpour;
using namespace downpour::testing;
using namespace std::chrono_literals;

namespace {

std::vector<std::string> local_args(const temp_dir& dir, std::vector<std::string> extra = {}) {
  std::vector<std::string> a = {DOWNPOUR_BINARY, "--last-step=40", "--save-checkpoint-secs=0",
                                "--quiet", "--checkpoint-dir=" + dir.str()};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

}  // namespace

TEST_CASE(
    "a completed local job run again prints its result and keeps summary.json and "
    "metrics.csv") {
  temp_dir dir("completed-local");
  process first(local_args(dir), dir / "first.log");
  REQUIRE(first.wait(120s) == exit_completed);
  const auto summary = read_text(dir / "summary.json");
  const auto metrics = read_text(dir / "metrics.csv");
  REQUIRE(summary_field(summary, "status") == "completed");
  process again(local_args(dir), dir / "again.log");
  CHECK(again.wait(60s) == exit_completed);
  const auto out = again.output();
  CAPTURE(out);
  CHECK(out.find("the job completed before at global step 40") != std::string::npos);
  CHECK(out.find("final: global_step=40 loss=" + summary_field(summary, "loss").substr(0, 4)) !=
        std::string::npos);
  CHECK(out.find("summary.json kept") != std::string::npos);
  CHECK(read_text(dir / "summary.json") == summary);
  CHECK(read_text(dir / "metrics.csv") == metrics);

  process fresh(local_args(dir, {"--fresh"}), dir / "fresh.log");
  CHECK(fresh.wait(120s) == exit_completed);
  CAPTURE(fresh.output());
  CHECK(fresh.output().find("completed before") == std::string::npos);
  CHECK(summary_field(read_text(dir / "summary.json"), "status") == "completed");
  CHECK(read_text(dir / "summary.json") != summary);  // trained again: another wall time
}

TEST_CASE("every node of a completed process cluster started again exits 0 at once") {
  temp_dir dir("completed-cluster");
  // A long --connect-timeout: a node that waited for it would fail this test's bound.
  auto c = make_cluster(2, 2, dir,
                        {"--last-step=40", "--save-checkpoint-secs=0", "--connect-timeout=120"});
  {
    two_by_two nodes(c, dir);
    for (auto* p : nodes.all()) REQUIRE(p->wait(120s) == exit_completed);
  }
  const auto summary = read_text(dir / "summary.json");
  const auto metrics = read_text(dir / "metrics.csv");
  REQUIRE(summary_field(summary, "status") == "completed");
  const auto started = std::chrono::steady_clock::now();
  two_by_two again(c, dir, {}, "-again");
  for (auto* p : again.all()) {
    CAPTURE(p->output());
    CHECK(p->wait(60s) == exit_completed);
    CHECK(error_lines(p->output()) == 0);
  }
  const double took = seconds_since(started);
  MESSAGE("a completed cluster of 4 processes started again ended in " << took << " s");
  CHECK(took < 30);
  CHECK(again.chief.output().find("summary.json kept") != std::string::npos);
  CHECK(read_text(dir / "summary.json") == summary);
  CHECK(read_text(dir / "metrics.csv") == metrics);
}

}  // namespace test_completion
