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

// What Prometheus scrapes: the chief's /metrics passed through unchanged,
// noting the global step each scrape showed. Prometheus has no notification of
// a scrape, so the test waits on the tap instead of asking Prometheus on a timer.
class scrape_tap {
 public:
  explicit scrape_tap(std::uint16_t chief_port) : chief_("127.0.0.1", chief_port) {
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

 private:
  std::string pass_on() {
    std::unique_lock<std::mutex> lock(mutex_);
    auto res = chief_.Get("/metrics");
    if (!res || res->status != 200) throw std::runtime_error("the chief did not answer");
    const std::string key = "\ndownpour_global_step ";
    const auto at = res->body.find(key);
    if (at == std::string::npos) throw std::runtime_error("no downpour_global_step");
    steps_.push_back(std::stod(res->body.substr(at + key.size())));
    scraped_.notify_all();
    return res->body;
  }

  httplib::Client chief_;
  std::mutex mutex_;
  std::condition_variable scraped_;
  std::vector<double> steps_;
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
