// The real Prometheus server scrapes a running job's chief. Exits 77 (skipped)
// only where the prometheus binary is not installed (scripts/install-deps
// installs Debian's package).
#include <doctest/doctest.h>
#include <httplib.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>

#include "metrics_job.hpp"
#include "runtime/net/metrics_http.hpp"

namespace test_prometheus {

using namespace downpour;
using downpour::testing::process;
using downpour::testing::temp_dir;
using namespace std::chrono_literals;

namespace {

std::string prometheus_binary() {
  for (const char* path : {"/usr/bin/prometheus", "/usr/local/bin/prometheus"})
    if (::access(path, X_OK) == 0) return path;
  return "";
}

// What Prometheus scrapes: a node's /metrics passed through unchanged,
// noting the number after key (the chief's global step) each scrape showed.
// Prometheus has no notification of a scrape, so the test waits on the tap
// instead of asking Prometheus on a timer.
class scrape_tap {
 public:
  explicit scrape_tap(std::uint16_t port, std::string step_key = "\ndownpour_global_step ")
      : chief_("127.0.0.1", port), key_(std::move(step_key)) {
    auto started = metrics_endpoint::start("127.0.0.1", 0, [this] { return pass_on(); });
    REQUIRE(started);
    endpoint_ = std::move(*started);
  }
  std::uint16_t port() const { return endpoint_->port(); }

  // True once n scrapes have begun, false after scaled(timeout).
  bool wait_for_scrapes(std::size_t n, std::chrono::seconds timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    return scraped_.wait_for(lock, testing::scaled(timeout), [&] { return steps_.size() >= n; });
  }

  // The global step each scrape so far showed.
  std::vector<double> served() {
    std::lock_guard<std::mutex> lock(mutex_);
    return steps_;
  }

  // The newest exposition text passed on.
  std::string last_body() {
    std::lock_guard<std::mutex> lock(mutex_);
    return bodies_.empty() ? "" : bodies_.back();
  }

 private:
  std::string pass_on() {
    std::unique_lock<std::mutex> lock(mutex_);
    auto res = chief_.Get("/metrics");
    if (!res || res->status != 200) throw std::runtime_error("the chief did not answer");
    const auto at = res->body.find(key_);
    if (at == std::string::npos) throw std::runtime_error("no" + key_);
    steps_.push_back(std::stod(res->body.substr(at + key_.size())));
    bodies_.push_back(res->body);
    scraped_.notify_all();
    return res->body;
  }

  httplib::Client chief_;
  std::string key_;
  std::mutex mutex_;
  std::condition_variable scraped_;
  std::vector<double> steps_;
  std::vector<std::string> bodies_;
  std::unique_ptr<metrics_endpoint> endpoint_;  // last: stops before the rest goes
};

// Every sample of downpour_global_step Prometheus holds, oldest first.
std::vector<double> samples_in(httplib::Client& prometheus) {
  auto res = prometheus.Get(
      "/api/v1/query?query=downpour_global_step%7Bjob%3D%22downpour%22%7D%5B1h%5D");
  REQUIRE(res);
  CAPTURE(res->body);
  REQUIRE(res->status == 200);
  const auto result = nlohmann::json::parse(res->body).at("data").at("result");
  REQUIRE(result.size() == 1);
  std::vector<double> values;
  for (const auto& v : result.at(0).at("values")) values.push_back(std::stod(v.at(1).get<std::string>()));
  return values;
}

std::string listed(const std::vector<double>& steps) {
  std::string out;
  for (double s : steps) out += (out.empty() ? "" : " ") + std::to_string(static_cast<long long>(s));
  return out;
}

}  // namespace

TEST_CASE("Prometheus scrapes the chief and stores downpour_global_step as it rises") {
  const std::string binary = prometheus_binary();
  if (binary.empty()) {
    MESSAGE("test_prometheus: skipped: no prometheus binary (scripts/install-deps installs it)");
    std::exit(77);
  }
  temp_dir dir("prometheus");
  downpour::testing::metrics_job job(dir);
  scrape_tap tap(job.chief_metrics_port());
  const port_reservation web(1);
  std::ofstream(dir / "prometheus.yml")
      << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
      << "scrape_configs:\n  - job_name: downpour\n    static_configs:\n"
      << "      - targets: ['127.0.0.1:" << tap.port() << "']\n";
  process prometheus({binary, "--config.file=" + (dir / "prometheus.yml"),
                      "--storage.tsdb.path=" + (dir / "tsdb"),
                      "--web.listen-address=127.0.0.1:" + std::to_string(web[0])},
                     dir / "prometheus.log");
  REQUIRE(prometheus.wait_for_output("Server is ready to receive web requests", 60s));
  // Prometheus scrapes a target one scrape after another and stores a
  // scrape's samples before it starts the next: after the fourth has begun,
  // three are stored (two, should one have timed out).
  CAPTURE(prometheus.output());
  REQUIRE(tap.wait_for_scrapes(4, 60s));
  httplib::Client client("127.0.0.1", web[0]);
  const auto stored = samples_in(client);
  const auto served = tap.served();
  const std::string steps = "served " + listed(served) + ", stored " + listed(stored);
  CAPTURE(steps);
  REQUIRE(stored.size() >= 2);
  for (std::size_t i = 0; i < stored.size(); ++i) {
    CHECK(std::find(served.begin(), served.end(), stored[i]) != served.end());
    if (i > 0) CHECK(stored[i] > stored[i - 1]);
  }
  prometheus.kill(SIGTERM);
  CHECK(prometheus.wait(30s) == 0);
}

namespace {

// The one value of an instant query's result.
double query_value(httplib::Client& prometheus, const std::string& encoded_query) {
  auto res = prometheus.Get("/api/v1/query?query=" + encoded_query);
  REQUIRE(res);
  CAPTURE(res->body);
  REQUIRE(res->status == 200);
  const auto result = nlohmann::json::parse(res->body).at("data").at("result");
  REQUIRE(result.size() == 1);
  return std::stod(result.at(0).at("value").at(1).get<std::string>());
}

}  // namespace

TEST_CASE("summed over the documented scrape config, the shards' parameters are the model's size "
          "once, and promtool passes every node's metrics") {
  const std::string binary = prometheus_binary();
  if (binary.empty()) {
    MESSAGE("test_prometheus: skipped: no prometheus binary (scripts/install-deps installs it)");
    std::exit(77);
  }
  temp_dir dir("prometheus-sum");
  // The scrape config of docs/operations.md: every node of the job, each on its --metrics-port.
  const port_reservation metrics(4);
  auto c = downpour::testing::make_cluster(2, 2, dir, {"--connect-timeout=20",
                                                       "--last-step=200000", "--log-every=200"});
  auto on = [&](std::size_t k) { return "--metrics-port=" + std::to_string(metrics[k]); };
  process ps0(c.node("ps", 0, {on(0)}), dir / "ps0.log");
  process ps1(c.node("ps", 1, {on(1)}), dir / "ps1.log");
  process chief(c.node("worker", 0, {on(2)}), dir / "w0.log");
  process w1(c.node("worker", 1, {on(3)}), dir / "w1.log");
  REQUIRE(w1.wait_for_output("global_step:", 60s));
  // Each target through a tap that sees Prometheus' scrapes (keyed on a line every node has).
  std::vector<std::unique_ptr<scrape_tap>> taps;
  for (std::size_t k = 0; k < 4; ++k)
    taps.push_back(std::make_unique<scrape_tap>(metrics[k], "\nprocess_start_time_seconds "));
  const port_reservation web(1);
  {
    std::ofstream yml(dir / "prometheus.yml");
    yml << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
        << "scrape_configs:\n  - job_name: downpour\n    static_configs:\n      - targets: [";
    for (std::size_t k = 0; k < 4; ++k)
      yml << (k ? ", " : "") << "'127.0.0.1:" << taps[k]->port() << "'";
    yml << "]\n";
  }
  process prometheus({binary, "--config.file=" + (dir / "prometheus.yml"),
                      "--storage.tsdb.path=" + (dir / "tsdb"),
                      "--web.listen-address=127.0.0.1:" + std::to_string(web[0])},
                     dir / "prometheus.log");
  REQUIRE(prometheus.wait_for_output("Server is ready to receive web requests", 60s));
  CAPTURE(prometheus.output());
  // A scrape is stored before the next of the same target begins.
  for (auto& tap : taps) REQUIRE(tap->wait_for_scrapes(2, 60s));
  httplib::Client client("127.0.0.1", web[0]);
  CHECK(query_value(client, "sum(downpour_shard_parameters)") == 397510);
  CHECK(query_value(client, "count(downpour_shard_up)") == 2);
  CHECK(query_value(client, "count(downpour_global_steps_total)") == 1);
  CHECK(query_value(client, "count(process_cpu_seconds_total)") == 4);
  CHECK(query_value(client, "count(downpour_worker_steps_total)") == 2);
  const std::string promtool = "/usr/bin/promtool";
  if (::access(promtool.c_str(), X_OK) != 0) {
    MESSAGE("promtool is not installed: the lint is left out");
  } else {
    for (std::size_t k = 0; k < 4; ++k) {
      const auto path = dir / ("metrics-" + std::to_string(k) + ".txt");
      std::ofstream(path) << taps[k]->last_body();
      process lint({"/bin/sh", "-c", promtool + " check metrics < '" + path + "'"},
                   dir / ("promtool-" + std::to_string(k) + ".log"));
      CHECK(lint.wait(30s) == 0);
      CAPTURE(lint.output());
      CHECK(lint.output().empty());
    }
  }
  prometheus.kill(SIGTERM);
  CHECK(prometheus.wait(30s) == 0);
}

}  // namespace test_prometheus
