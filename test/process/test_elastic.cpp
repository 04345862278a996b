// --join: a worker not in --worker-hosts joins a running job as processes
// (docs/failure-model.md "Elastic workers"). The joiner is started once the
// chief's log shows a step, read with the shared log matcher; no sleeps.
#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <cmath>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cluster_procs.hpp"

namespace test_elastic {

using namespace downpour;
using namespace downpour::testing;
using namespace std::chrono_literals;

namespace {

constexpr std::int64_t kLastStep = 600;

// The newest step in out is at least step.
bool past_step(const std::string& out, std::int64_t step) {
  return newest_progress_step(out) >= step;
}

// The joiner's command line: the cluster's, without --task, with --join.
std::vector<std::string> joiner_args(const cluster_args& c, std::vector<std::string> extra = {}) {
  auto a = c.node("worker", 0, std::move(extra));
  for (auto it = a.begin(); it != a.end(); ++it)
    if (it->rfind("--task=", 0) == 0) {
      a.erase(it);
      break;
    }
  a.push_back("--join=" + c.workers.substr(0, c.workers.find(',')));
  return a;
}

struct elastic_run {
  double ema = 0;
  double joiner_first_step_s = -1;  // from its start to its first progress line
};

// 1 ps + 1 listed worker, a joiner started when the chief shows step 100.
elastic_run run_with_joiner(const std::string& mode, const temp_dir& dir) {
  const auto c = make_cluster(1, 1, dir / mode, {"--mode=" + mode, "--last-step=600",
                                                 "--log-every=10", "--connect-timeout=30"});
  process ps(c.node("ps", 0), dir / (mode + "-ps.log"));
  process chief(c.node("worker", 0), dir / (mode + "-w0.log"));
  REQUIRE(chief.wait_until([](const std::string& out) { return past_step(out, 100); }, 120s));
  const auto started = std::chrono::steady_clock::now();
  process joiner(joiner_args(c), dir / (mode + "-joiner.log"));
  elastic_run r;
  REQUIRE(joiner.wait_until([](const std::string& out) { return progress_lines(out) > 0; }, 60s));
  r.joiner_first_step_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  for (auto* p : {&chief, &joiner, &ps}) {
    CAPTURE(p->output());
    CHECK(p->wait(300s) == 0);
  }
  CHECK(chief.output().find("a node joined as worker task 1") != std::string::npos);
  CHECK(joiner.output().find("joined the job as worker task 1") != std::string::npos);
  CHECK(progress_lines(joiner.output()) > 0);
  const auto last = final_of(chief.output());
  REQUIRE(last);
  CHECK(last->global_step == kLastStep);
  r.ema = last->ema_test_accuracy;
  return r;
}

// The same job with both workers listed from the start.
double run_listed(const std::string& mode, const temp_dir& dir) {
  const auto c = make_cluster(1, 2, dir / (mode + "-listed"),
                              {"--mode=" + mode, "--last-step=600", "--log-every=100",
                               "--connect-timeout=30"});
  process ps(c.node("ps", 0), dir / (mode + "-listed-ps.log"));
  process chief(c.node("worker", 0), dir / (mode + "-listed-w0.log"));
  process w1(c.node("worker", 1), dir / (mode + "-listed-w1.log"));
  for (auto* p : {&chief, &w1, &ps}) CHECK(p->wait(300s) == 0);
  const auto last = final_of(chief.output());
  REQUIRE(last);
  return last->ema_test_accuracy;
}

void joins_mid_job(const std::string& mode) {
  temp_dir dir("elastic-" + mode);
  const auto joined = run_with_joiner(mode, dir);
  const double listed = run_listed(mode, dir);
  MESSAGE(mode << ": the joiner trained " << joined.joiner_first_step_s * 1000
               << " ms after its start (first progress line; target < 2000 ms)");
  MESSAGE(mode << ": final EMA accuracy with a joiner " << joined.ema << ", both listed " << listed
               << " (difference " << std::abs(joined.ema - listed) << "; target 0.005)");
  CHECK(joined.joiner_first_step_s < 2.0 * time_scale());
}

std::size_t lines_in(const std::string& text) {
  std::size_t n = 0;
  for (char ch : text) n += ch == '\n';
  return n;
}

// A joiner's refusal: exit 2 and one line saying why.
void check_refused(process& joiner, const std::string& says) {
  CHECK(joiner.wait(60s) == 2);
  const auto out = joiner.output();
  CAPTURE(out);
  CHECK(out.find(says) != std::string::npos);
  CHECK(lines_in(out) == 1);
}

}  // namespace

TEST_CASE("an async job takes a worker that joins mid-job and ends at exactly the last step") {
  joins_mid_job("async");
}

TEST_CASE("a sync job raises its round for a joiner at a step boundary and ends exactly") {
  joins_mid_job("sync");
}

TEST_CASE("the chief's status shows a joined worker while it trains, as text and as JSON") {
  temp_dir dir("elastic-status");
  const auto c = make_cluster(1, 1, dir, {"--last-step=100000", "--connect-timeout=30"});
  process ps(c.node("ps", 0), dir / "ps.log");
  process chief(c.node("worker", 0), dir / "w0.log");
  REQUIRE(chief.wait_until([](const std::string& out) { return progress_lines(out) > 0; }, 120s));
  process joiner(joiner_args(c), dir / "joiner.log");
  REQUIRE(joiner.wait_until([](const std::string& out) { return progress_lines(out) > 0; }, 60s));
  process text({DOWNPOUR_BINARY, "status", "--chief=" + c.workers}, dir / "status.log");
  CHECK(text.wait(30s) == 0);
  CAPTURE(text.output());
  CHECK(text.output().find("workers: 2 live of 1 listed + 1 joined (live: 0,1; dead: none; "
                           "joined: 1)") != std::string::npos);
  process json({DOWNPOUR_BINARY, "status", "--chief=" + c.workers, "--json"},
               dir / "status-json.log");
  CHECK(json.wait(30s) == 0);
  CAPTURE(json.output());
  const auto facts = nlohmann::json::parse(json.output().substr(json.output().find('{')));
  CHECK(facts.at("workers").at("joined") == nlohmann::json::parse("[1]"));
  chief.kill(SIGTERM);
  CHECK(chief.wait(120s) == 4);
  CHECK(joiner.wait(120s) == 4);
  CHECK(ps.wait(120s) == 4);
}

TEST_CASE("a joiner with the wrong secret or other settings is refused with one line, exit 2") {
  temp_dir dir("elastic-refused");
  const auto secret = dir / "secret";
  const auto wrong = dir / "wrong";
  std::ofstream(secret) << "correct horse battery staple\n";
  std::ofstream(wrong) << "incorrect horse battery staple\n";
  const auto c = make_cluster(1, 1, dir, {"--last-step=100000", "--connect-timeout=30"});
  process ps(c.node("ps", 0, {"--cluster-secret-file=" + secret}), dir / "ps.log");
  process chief(c.node("worker", 0, {"--cluster-secret-file=" + secret}), dir / "w0.log");
  REQUIRE(chief.wait_until([](const std::string& out) { return progress_lines(out) > 0; }, 120s));
  {
    process joiner(joiner_args(c, {"--cluster-secret-file=" + wrong}), dir / "j-secret.log");
    check_refused(joiner, "refused this worker's join: hello refused: no proof of this cluster's secret");
  }
  {
    process joiner(joiner_args(c, {"--cluster-secret-file=" + secret, "--batch-size=50"}),
                   dir / "j-settings.log");
    check_refused(joiner, "refused this worker's join: batch-size=50 here but batch-size=100 at the chief");
  }
  CHECK(chief.output().find("a node joined") == std::string::npos);
  chief.kill(SIGTERM);
  CHECK(chief.wait(120s) == 4);
  CHECK(ps.wait(120s) == 4);
}

TEST_CASE("a streamed-input job refuses a joiner: its data plan is fixed") {
  temp_dir dir("elastic-stream");
  {
    std::ofstream train(dir / "train.libsvm");
    for (int i = 0; i < 20000; ++i) train << (i % 2) << " " << (i % 500) << ":1\n";
    std::ofstream(dir / "test.libsvm") << "1 3:1\n0 4:1\n";
  }
  const auto c = make_cluster(
      1, 1, dir,
      {"--model=logreg", "--data-format=libsvm", "--train-file=" + dir / "train.libsvm",
       "--test-file=" + dir / "test.libsvm", "--sparse-rows=1024", "--validation-size=0",
       "--batch-size=10", "--passes=100", "--last-step=100000", "--connect-timeout=30"});
  process ps(c.node("ps", 0), dir / "ps.log");
  process chief(c.node("worker", 0), dir / "w0.log");
  REQUIRE(chief.wait_until([](const std::string& out) { return progress_lines(out) > 0; }, 120s));
  process joiner(joiner_args(c), dir / "joiner.log");
  check_refused(joiner, "the chief refuses joins: the job streams its input");
  chief.kill(SIGTERM);
  CHECK(chief.wait(120s) == 4);
  CHECK(ps.wait(120s) == 4);
}

TEST_CASE("a joined worker rides through a failover with --ps-replicas 2: ps 1 killed with -9, "
          "the joiner trains on, the job ends exactly and no update is lost") {
  temp_dir dir("elastic-replicas");
  const auto c = make_cluster(2, 1, dir, {"--last-step=3000", "--log-every=10",
                                          "--connect-timeout=30", "--ps-replicas=2",
                                          "--save-checkpoint-secs=0"});
  process ps0(c.node("ps", 0), dir / "ps0.log");
  process ps1(c.node("ps", 1), dir / "ps1.log");
  process chief(c.node("worker", 0), dir / "w0.log");
  REQUIRE(chief.wait_until([](const std::string& out) { return past_step(out, 100); }, 120s));
  process joiner(joiner_args(c), dir / "joiner.log");
  REQUIRE(joiner.wait_until([](const std::string& out) { return progress_lines(out) > 2; }, 60s));
  const auto before = progress_lines(joiner.output());
  ps1.kill(SIGKILL);
  CHECK(ps1.wait(30s) == 128 + SIGKILL);
  REQUIRE_MESSAGE(chief.wait_for_output("training resumes at global step", 30s), chief.output());
  for (auto* p : {&chief, &joiner, &ps0}) {
    CAPTURE(p->output());
    CHECK(p->wait(300s) == 0);
  }
  const auto out = chief.output();
  CAPTURE(out);
  CHECK(progress_lines(joiner.output()) > before);  // trained after the failover too
  REQUIRE(final_of(out));
  CHECK(final_of(out)->global_step == 3000);
  CHECK(final_of(out)->updates_lost == 0);
  CHECK(final_of(out)->updates_applied == 3000);
  CHECK(restored_step(out) == -1);
}

}  // namespace test_elastic
