// The real Prometheus server scrapes a running job's chief. Exits 77 (skipped)
// only where the prometheus binary is not installed (scripts/install-deps
// installs Debian's package).
#include <doctest/doctest.h>
#include <httplib.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cluster_procs.hpp"

using namespace downpour;
using downpour::testing::make_cluster;
using downpour::testing::process;
using downpour::testing::temp_dir;
using namespace std::chrono_literals;

namespace {

std::string prometheus_binary() {
  for (const char* path : {"/usr/bin/prometheus", "/usr/local/bin/prometheus"})
    if (::access(path, X_OK) == 0) return path;
  return "";
}

// The newest value of downpour_global_step in Prometheus, -1 while it has none.
double global_step_in(httplib::Client& prometheus) {
  auto res = prometheus.Get("/api/v1/query?query=downpour_global_step%7Bjob%3D%22downpour%22%7D");
  if (!res || res->status != 200) return -1;
  const auto j = nlohmann::json::parse(res->body);
  const auto& result = j.at("data").at("result");
  if (result.empty()) return -1;
  return std::stod(result.at(0).at("value").at(1).get<std::string>());
}

}  // namespace

TEST_CASE("Prometheus scrapes the chief and sees downpour_global_step rise") {
  const std::string binary = prometheus_binary();
  if (binary.empty()) {
    MESSAGE("test_prometheus: skipped: no prometheus binary (scripts/install-deps installs it)");
    std::exit(77);
  }
  temp_dir dir("prometheus");
  auto c = make_cluster(1, 1, dir, {"--connect-timeout=20", "--last-step=200000", "--log-every=200"});
  const port_reservation ports(2);
  const std::uint16_t metrics_port = ports[0], web_port = ports[1];
  std::ofstream(dir / "prometheus.yml")
      << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
      << "scrape_configs:\n  - job_name: downpour\n    static_configs:\n"
      << "      - targets: ['127.0.0.1:" << metrics_port << "']\n";
  process ps0(c.node("ps", 0), dir / "ps0.log");
  process chief(c.node("worker", 0, {"--metrics-port=" + std::to_string(metrics_port)}),
                dir / "w0.log");
  REQUIRE(chief.wait_for_output("global_step:", 60s));
  process prometheus({binary, "--config.file=" + (dir / "prometheus.yml"),
                      "--storage.tsdb.path=" + (dir / "tsdb"),
                      "--web.listen-address=127.0.0.1:" + std::to_string(web_port)},
                     dir / "prometheus.log");
  REQUIRE(prometheus.wait_for_output("Server is ready to receive web requests", 60s));
  httplib::Client client("127.0.0.1", web_port);
  // Prometheus has no push notification of a scrape: ask it once per scrape
  // interval until two scrapes show the step rising (the deadline is only a
  // failure bound).
  const auto deadline = std::chrono::steady_clock::now() + testing::scaled(60s);
  double first = -1, latest = -1;
  while (std::chrono::steady_clock::now() < deadline && !(first >= 0 && latest > first)) {
    const double now = global_step_in(client);
    if (first < 0) first = now;
    latest = now;
    std::this_thread::sleep_for(1s);
  }
  CAPTURE(prometheus.output());
  CHECK(first >= 0);
  CHECK(latest > first);
  prometheus.kill(SIGTERM);
  CHECK(prometheus.wait(30s) == 0);
  chief.kill(SIGKILL);
  ps0.kill(SIGKILL);
}
