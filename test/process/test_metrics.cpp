// Machine-readable views of a running job: `status --json` and the
// Prometheus endpoint (--metrics-port), as text and through HTTP.
#include <doctest/doctest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <cmath>
#include <regex>
#include <sstream>

#include "reporting/status_json.hpp"
#include "config/version.hpp"
#include "metrics_job.hpp"
#include "runtime/cli/status_text.hpp"
#include "runtime/net/metrics_http.hpp"
#include "runtime/net/metrics_text.hpp"
#include "runtime/net/ports.hpp"
#include "runtime/node/job.hpp"
#include "reporting/meters.hpp"

namespace test_metrics {

using namespace downpour;
using downpour::testing::process;
using downpour::testing::temp_dir;
using namespace std::chrono_literals;

namespace {

status_facts sample_facts() {
  status_facts f;
  f.mode = "async";
  f.global_step = 120;
  f.last_step = 1000;
  f.steps_per_s = 40.0;
  f.loss = 0.5f;
  f.learning_rate = 0.01;
  f.live_workers = {0, 1};
  f.dead_workers = {2};
  f.expected_workers = 3;
  f.shards = {shard_facts{true, 120, {0, 10, 20, 5}, 1, 2, 3}, shard_facts{}};
  f.last_checkpoint = "/x/model.ckpt-100";
  f.checkpoint_age_s = 4.5;
  f.config_sources = {{"role", "TF_CONFIG task.type"}, {"batch-size", "DOWNPOUR_BATCH_SIZE"}};
  return f;
}

// Every line is a comment, blank, or "name{labels} value" with a known family.
void check_exposition(const std::string& text) {
  static const std::regex sample(
      R"(^([a-z_]+)(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? (NaN|[+-]Inf|-?[0-9.e+-]+)$)");
  static const std::regex type(R"(^# TYPE ([a-z_]+) (gauge|counter|histogram)$)");
  std::istringstream in(text);
  std::string line, family, kind;
  std::smatch m;
  while (std::getline(in, line)) {
    CAPTURE(line);
    if (line.rfind("# HELP ", 0) == 0) continue;
    if (std::regex_match(line, m, type)) {
      family = m[1];
      kind = m[2];
      CHECK((m[2] != "counter" || family.size() > 6));
      if (m[2] == "counter") CHECK(family.substr(family.size() - 6) == "_total");
      continue;
    }
    REQUIRE(std::regex_match(line, m, sample));
    if (kind == "histogram")
      CHECK((m[1] == family + "_bucket" || m[1] == family + "_sum" || m[1] == family + "_count"));
    else
      CHECK(m[1] == family);
  }
}

// The value of the sample "series value" in an exposition; NaN if absent.
double sample_value(const std::string& text, const std::string& series) {
  const auto at = text.find("\n" + series + " ");
  if (at == std::string::npos) return std::nan("");
  return std::stod(text.substr(at + series.size() + 2));
}

}  // namespace

TEST_CASE("status JSON keeps every fact of the text form and writes a diverged loss as null") {
  status_facts f = sample_facts();
  f.validation = validation_facts{100, 0.9, 0.91};
  const auto back = parse_status_json(status_json(f));
  CHECK(format_status(back) == format_status(f));
  const auto j = nlohmann::json::parse(status_json(f));
  CHECK(j.at("shards").at(0).at("ranges") == nlohmann::json::parse("[[0,10],[20,25]]"));
  CHECK(j.at("shards").at(0).at("floats") == 15);
  CHECK(j.at("eta_s") == 22.0);
  CHECK(j.at("last_checkpoint").at("path") == "/x/model.ckpt-100");
  CHECK(j.at("config_sources").at("role") == "TF_CONFIG task.type");
  CHECK(format_status(f).find("config_sources: batch-size from DOWNPOUR_BATCH_SIZE, role from "
                              "TF_CONFIG task.type\n") != std::string::npos);
  f.loss = std::numeric_limits<float>::quiet_NaN();
  CHECK(nlohmann::json::parse(status_json(f)).at("loss").is_null());
}

TEST_CASE("the chief's status text, JSON and metrics show the workers that joined with --join") {
  status_facts f = sample_facts();
  CHECK(format_status(f).find("workers: 2 live of 3 (live: 0,1; dead: 2)\n") != std::string::npos);
  CHECK(sample_value(chief_exposition(f, shard_series::here, nullptr), "downpour_workers_joined") ==
        0.0);
  f.live_workers = {0, 1, 3};
  f.joined_workers = {3};
  CHECK(format_status(f).find("workers: 3 live of 3 listed + 1 joined (live: 0,1,3; dead: 2; "
                              "joined: 3)\n") != std::string::npos);
  const auto j = nlohmann::json::parse(status_json(f));
  CHECK(j.at("workers").at("joined") == nlohmann::json::parse("[3]"));
  CHECK(parse_status_json(status_json(f)).joined_workers == std::vector<std::uint32_t>{3});
  const std::string text = chief_exposition(f, shard_series::here, nullptr);
  check_exposition(text);
  CHECK(sample_value(text, "downpour_workers_joined") == 1.0);
  CHECK(sample_value(text, "downpour_workers_live") == 3.0);
}

TEST_CASE("the chief's exposition follows the text format and names") {
  status_facts f = sample_facts();
  f.loss = std::numeric_limits<float>::infinity();
  const std::string text = chief_exposition(f, shard_series::here, nullptr);
  CAPTURE(text);
  check_exposition(text);
  CHECK(text.find(std::string("downpour_build_info{version=\"") + build_version() + "\",role=\"chief\"} 1\n") !=
        std::string::npos);
  CHECK(text.find("\ndownpour_global_step 120\n") != std::string::npos);
  CHECK(text.find("\ndownpour_train_loss +Inf\n") != std::string::npos);
  CHECK(text.find("downpour_shard_up{shard=\"1\"} 0\n") != std::string::npos);
  CHECK(text.find("downpour_shard_pulls_replayed_total{shard=\"0\"} 3\n") != std::string::npos);
  CHECK(text.find("downpour_last_checkpoint_step 100\n") != std::string::npos);
  CHECK(text.find("downpour_validation_accuracy") == std::string::npos);  // not evaluated yet
  f.validation = validation_facts{100, 0.9, 0.91};
  const std::string evaluated = chief_exposition(f, shard_series::here, nullptr);
  check_exposition(evaluated);
  CHECK(evaluated.find("downpour_validation_accuracy{weights=\"ema\"} 0.91") != std::string::npos);
}

TEST_CASE("each series comes from one node: the chief of a cluster leaves the shards to their "
          "ps, the step is a counter, a non-finite loss is NaN, and the job's state is one of a "
          "few") {
  status_facts f = sample_facts();
  f.loss = std::numeric_limits<float>::quiet_NaN();
  f.bad_batches_skipped = 7;
  f.state = "stopping";
  node_meters meters;
  meters.worker(0).steps = 5;
  meters.worker(0).step_seconds.observe(0.02);
  meters.checkpoint().saves = 1;
  meters.checkpoint().last_size_bytes = 3200000;
  meters.wire().sent[static_cast<std::size_t>(peer_kind::ps)] = 1590040;
  meters.wire().received[static_cast<std::size_t>(peer_kind::ps)] = 1590052;
  const std::string text = chief_exposition(f, shard_series::at_each_ps, &meters);
  CAPTURE(text);
  check_exposition(text);
  CHECK(text.find("downpour_shard_") == std::string::npos);
  CHECK(text.find("\ndownpour_shards_reachable 1\n") != std::string::npos);
  CHECK(text.find("# TYPE downpour_global_steps_total counter\n"
                  "downpour_global_steps_total 120\n") != std::string::npos);
  CHECK(text.find("downpour_steps_per_second") == std::string::npos);  // rate() is PromQL's
  CHECK(text.find("\ndownpour_train_loss NaN\n") != std::string::npos);
  CHECK(text.find("\ndownpour_bad_batches_skipped_total 7\n") != std::string::npos);
  CHECK(text.find("downpour_job_state{state=\"stopping\"} 1\n") != std::string::npos);
  CHECK(text.find("downpour_job_state{state=\"training\"} 0\n") != std::string::npos);
  CHECK(text.find("downpour_worker_steps_total{worker=\"0\"} 5\n") != std::string::npos);
  CHECK(text.find("downpour_worker_step_duration_seconds_bucket{worker=\"0\",le=\"0.025\"} 1\n") !=
        std::string::npos);
  CHECK(text.find("\ndownpour_checkpoint_size_bytes 3200000\n") != std::string::npos);
  CHECK(text.find("# TYPE downpour_bytes_sent_total counter\n") != std::string::npos);
  CHECK(text.find("downpour_bytes_sent_total{peer=\"ps\"} 1590040\n") != std::string::npos);
  CHECK(text.find("downpour_bytes_sent_total{peer=\"worker\"} 0\n") != std::string::npos);
  CHECK(text.find("downpour_bytes_received_total{peer=\"ps\"} 1590052\n") != std::string::npos);
  CHECK(text.find("downpour_bytes_received_total{peer=\"chief\"} 0\n") != std::string::npos);
  for (const char* name : {"process_cpu_seconds_total", "process_resident_memory_bytes",
                           "process_start_time_seconds", "process_open_fds", "process_max_fds"})
    CHECK(text.find(std::string("\n") + name + " ") != std::string::npos);
  // An uninitialised shard has no step yet (not -1); its parameters are counted once, at its ps.
  const auto ps = ps_exposition({{0, shard_facts{true, -1, {0, 4}, 0, 0, 0}}}, nullptr);
  check_exposition(ps);
  CHECK(ps.find("downpour_shard_step{") == std::string::npos);
  CHECK(ps.find("downpour_shard_parameters{shard=\"0\"} 4\n") != std::string::npos);
  // The status JSON carries the state and the count, and the loss as null.
  const auto j = nlohmann::json::parse(status_json(f));
  CHECK(j.at("loss").is_null());
  CHECK(j.at("state") == "stopping");
  CHECK(j.at("bad_batches_skipped") == 7);
  CHECK(parse_status_json(status_json(f)).state == "stopping");
}

TEST_CASE("the updates applied and lost and the failover pause are counters, in status JSON too") {
  status_facts f = sample_facts();
  f.updates_applied = 1620;
  f.updates_lost = 1500;
  f.failover_pause_s = 1.25;
  const std::string text = chief_exposition(f, shard_series::here, nullptr);
  CAPTURE(text);
  check_exposition(text);
  CHECK(text.find("# TYPE downpour_updates_applied_total counter\n"
                  "downpour_updates_applied_total 1620\n") != std::string::npos);
  CHECK(text.find("# TYPE downpour_updates_lost_total counter\n"
                  "downpour_updates_lost_total 1500\n") != std::string::npos);
  CHECK(text.find("# TYPE downpour_failover_pause_seconds_total counter\n"
                  "downpour_failover_pause_seconds_total 1.25\n") != std::string::npos);
  const status_facts back = parse_status_json(status_json(f));
  CHECK(back.updates_applied == 1620);
  CHECK(back.updates_lost == 1500);
  CHECK(back.failover_pause_s == 1.25);
}

TEST_CASE("an undisturbed job's summary and final line count every update applied and none lost") {
  run_summary s;
  s.global_step = 300;
  s.updates_applied = 300;
  const std::string line = final_line(s);
  CHECK(line.find(" updates_applied=300 updates_lost=0 failover_pause_s=0.000") !=
        std::string::npos);
  const auto back = parse_summary_json(summary_json(s));
  REQUIRE(back);
  CHECK(back->updates_applied == 300);
  CHECK(back->updates_lost == 0);
  CHECK(back->failover_pause_s == 0.0);
}

TEST_CASE("the metrics endpoint serves /metrics and /healthz and answers 503 when collecting fails") {
  std::atomic<bool> fail{false};
  auto endpoint = metrics_endpoint::start("127.0.0.1", 0, [&] {
    if (fail) throw std::runtime_error("the chief did not answer");
    return ps_exposition({{1, shard_facts{true, 7, {0, 4}, 0, 0, 0}}}, nullptr);
  });
  REQUIRE(endpoint);
  httplib::Client client("127.0.0.1", (*endpoint)->port());
  auto health = client.Get("/healthz");
  REQUIRE(health);
  CHECK(health->status == 200);
  auto metrics = client.Get("/metrics");
  REQUIRE(metrics);
  CHECK(metrics->get_header_value("Content-Type") == exposition_content_type);
  CHECK(metrics->body.find("downpour_shard_step{shard=\"1\"} 7\n") != std::string::npos);
  fail = true;
  auto failed = client.Get("/metrics");
  REQUIRE(failed);
  CHECK(failed->status == 503);
  CHECK(failed->body == "downpour: the chief did not answer\n");
  // The port is now taken: a second endpoint says so instead of starting.
  auto taken = metrics_endpoint::start("127.0.0.1", (*endpoint)->port(), [] { return ""; });
  REQUIRE_FALSE(taken);
  CHECK(to_string(taken.error()).find("cannot listen on 127.0.0.1:") != std::string::npos);
}

TEST_CASE("a running job answers status --json and serves metrics from the chief and the ps") {
  temp_dir dir("metrics");
  // One option from the environment, to see status name its source.
  downpour::testing::metrics_job job(dir, {"/usr/bin/env", "DOWNPOUR_SAVE_CHECKPOINT_SECS=60"});
  const auto& c = job.c;
  process status({DOWNPOUR_BINARY, "status", "--json", "--chief=" + c.workers}, dir / "status.log");
  REQUIRE(status.wait(30s) == 0);
  CAPTURE(status.output());
  const auto j = nlohmann::json::parse(status.output());
  CHECK(j.at("chief") == c.workers);
  CHECK(j.at("mode") == "async");
  CHECK(j.at("global_step").get<std::int64_t>() > 0);
  CHECK(j.at("last_step") == 200000);
  CHECK(j.at("workers").at("live") == nlohmann::json::parse("[0]"));
  CHECK(j.at("shards").at(0).at("floats") == 397510);
  CHECK(j.at("last_checkpoint").at("path").get<std::string>().find("model.ckpt-") !=
        std::string::npos);
  CHECK(j.at("config_sources").at("last-step") == "--last-step");
  CHECK(j.at("config_sources").at("save-checkpoint-secs") == "DOWNPOUR_SAVE_CHECKPOINT_SECS");
  httplib::Client chief_http("127.0.0.1", job.chief_metrics_port());
  auto metrics = chief_http.Get("/metrics");
  REQUIRE(metrics);
  CAPTURE(metrics->body);
  check_exposition(metrics->body);
  CHECK(metrics->body.find("\ndownpour_workers_live 1\n") != std::string::npos);
  CHECK(metrics->body.find("downpour_shard_parameters") == std::string::npos);  // the ps's
  CHECK(metrics->body.find("downpour_worker_steps_total{worker=\"0\"} ") != std::string::npos);
  CHECK(metrics->body.find("downpour_checkpoint_last_success_timestamp_seconds ") !=
        std::string::npos);
  // The chief's worker pushed to the ps and pulled from it; it sends the ps nothing else.
  CHECK(sample_value(metrics->body, "downpour_bytes_sent_total{peer=\"ps\"}") > 397510 * 4);
  CHECK(sample_value(metrics->body, "downpour_bytes_received_total{peer=\"ps\"}") > 0);
  CHECK(sample_value(metrics->body, "downpour_bytes_sent_total{peer=\"worker\"}") == 0);
  httplib::Client ps_http("127.0.0.1", job.ps_metrics_port());
  auto shard = ps_http.Get("/metrics");
  REQUIRE(shard);
  check_exposition(shard->body);
  CHECK(shard->body.find("downpour_shard_step{shard=\"0\"} ") != std::string::npos);
  CHECK(shard->body.find("downpour_shard_parameters{shard=\"0\"} 397510\n") != std::string::npos);
  CHECK(shard->body.find("downpour_shard_gradient_staleness_steps_count{shard=\"0\"} ") !=
        std::string::npos);
  // A dense model's shard serves no rows: its row counters are there, at 0.
  CHECK(shard->body.find("downpour_rows_pulled_total{shard=\"0\"} 0\n") != std::string::npos);
  CHECK(shard->body.find("downpour_rows_pushed_total{shard=\"0\"} 0\n") != std::string::npos);
  CHECK(shard->body.find("downpour_shard_pull_seconds_count{shard=\"0\"} 0\n") !=
        std::string::npos);
  CHECK(shard->body.find("downpour_shard_sparse_rows{shard=\"0\"} 0\n") != std::string::npos);
  // The ps took the chief's init and the worker's pushes, and answered the pulls.
  CHECK(sample_value(shard->body, "downpour_bytes_received_total{peer=\"chief\"}") >
        397510 * 4);
  CHECK(sample_value(shard->body, "downpour_bytes_received_total{peer=\"worker\"}") >
        397510 * 4);
  CHECK(sample_value(shard->body, "downpour_bytes_sent_total{peer=\"worker\"}") > 0);
  CHECK(sample_value(shard->body, "downpour_bytes_sent_total{peer=\"ps\"}") == 0);
}

TEST_CASE("a chief whose metrics port is taken ends with a line naming the address") {
  temp_dir dir("metrics-taken");
  auto holder = metrics_endpoint::start("127.0.0.1", 0, [] { return std::string(); });
  REQUIRE(holder);
  const std::string port = std::to_string((*holder)->port());
  process job({DOWNPOUR_BINARY, "--last-step=50", "--quiet", "--checkpoint-dir=" + dir.str(),
               "--metrics-port=" + port},
              dir / "job.log");
  CHECK(job.wait(120s) == 1);
  CHECK(job.output().find("metrics: cannot listen on 127.0.0.1:" + port) != std::string::npos);
}

}  // namespace test_metrics
