// Clusters over IPv6: host lists, --bind and status --chief with bracketed
// literals ([::1]:PORT). Skipped (exit 77) on a machine without an IPv6
// loopback, so this program has its own main (CMakeLists.txt: test table).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <iostream>

#include "cluster_procs.hpp"

using namespace downpour;
using namespace downpour::testing;
using namespace std::chrono_literals;

TEST_CASE("two ps and two workers on [::1] train to the exact last step and exit 0") {
  temp_dir dir("ipv6");
  auto c = make_cluster(2, 2, dir, {"--last-step=300", "--log-every=100", "--connect-timeout=30"},
                        "::1");
  CHECK(c.ps.rfind("[::1]:", 0) == 0);
  std::vector<std::unique_ptr<process>> nodes;
  for (int k = 0; k < 2; ++k)
    nodes.push_back(
        std::make_unique<process>(c.node("ps", k), dir / ("ps" + std::to_string(k) + ".log")));
  for (int w : {1, 0})
    nodes.push_back(
        std::make_unique<process>(c.node("worker", w), dir / ("w" + std::to_string(w) + ".log")));
  for (auto& n : nodes) {
    CAPTURE(n->output());
    CHECK(n->wait(120s) == 0);
  }
  const auto final = final_of(nodes.back()->output());
  REQUIRE(final);
  CHECK(final->global_step == 300);
  CHECK(nodes[0]->output().find("listening as ps 0 on [::1]:" + std::to_string(c.ports[0])) !=
        std::string::npos);
}

TEST_CASE("--bind=[::1] and status --chief [::1]:PORT reach a job on IPv6 loopback") {
  temp_dir dir("ipv6-status");
  // Long enough to be running while status asks; the test ends it.
  auto c = make_cluster(1, 1, dir, {"--last-step=1000000", "--log-every=50", "--bind=[::1]"},
                        "::1");
  process ps(c.node("ps", 0), dir / "ps.log");
  process chief(c.node("worker", 0), dir / "w0.log");
  REQUIRE(chief.wait_until([](const std::string& out) { return progress_lines(out) > 0; }, 120s));
  const std::string at = "[::1]:" + std::to_string(c.ports[1]);
  process status({DOWNPOUR_BINARY, "status", "--chief", at, "--connect-timeout=10"},
                 dir / "status.log");
  CHECK(status.wait(60s) == 0);
  CAPTURE(status.output());
  CHECK(status.output().find("chief: " + at + "\n") != std::string::npos);
  CHECK(ps.output().find("listening as ps 0 on [::1]:") != std::string::npos);
  chief.kill(SIGKILL);
  ps.kill(SIGKILL);
}

int main(int argc, char** argv) {
  if (!loopback_available("::1")) {
    std::cout << "test_ipv6: skipped: this machine has no IPv6 loopback (::1)\n";
    return 77;
  }
  return doctest::Context(argc, argv).run();
}
