// A job to look at from outside (test_metrics, test_prometheus): one ps and one
// worker that train until the test ends, each serving --metrics-port.
#pragma once

#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

#include "cluster_procs.hpp"

namespace downpour::testing {

// Its nodes are killed with it; constructed once the chief trains. launcher
// goes before each command line (an environment, say).
struct metrics_job {
  explicit metrics_job(const temp_dir& dir, const std::vector<std::string>& launcher = {})
      : c(make_cluster(1, 1, dir, {"--connect-timeout=20", "--last-step=200000", "--log-every=200"})),
        ps0(launched(launcher, c.node("ps", 0, {metrics_option(0)})), dir / "ps0.log"),
        chief(launched(launcher, c.node("worker", 0, {metrics_option(1)})), dir / "w0.log") {
    REQUIRE(chief.wait_for_output("global_step:", std::chrono::seconds(60)));
  }

  std::uint16_t ps_metrics_port() const { return metrics_ports[0]; }
  std::uint16_t chief_metrics_port() const { return metrics_ports[1]; }

  port_reservation metrics_ports{2};
  cluster_args c;
  process ps0, chief;

 private:
  std::string metrics_option(std::size_t k) const {
    return "--metrics-port=" + std::to_string(metrics_ports[k]);
  }
  static std::vector<std::string> launched(std::vector<std::string> launcher,
                                           const std::vector<std::string>& args) {
    launcher.insert(launcher.end(), args.begin(), args.end());
    return launcher;
  }
};

}  // namespace downpour::testing
