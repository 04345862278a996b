// deploy/ (Kubernetes manifests, TFJob, systemd units, Dockerfile) is checked
// against the runtime by test/support/check_deploy.py: every environment a pod or
// unit gets is accepted by the real binary, the units pass systemd-analyze.
#include <doctest/doctest.h>

#include "subprocess.hpp"

namespace test_deploy {

using downpour::testing::process;
using downpour::testing::temp_dir;
using namespace std::chrono_literals;

TEST_CASE("the deployment examples fit the options and files the runtime reads") {
  temp_dir dir("deploy");
  const std::string source = DOWNPOUR_SOURCE_DIR;
  // Debian's python3 with python3-yaml (scripts/install-deps).
  process check({"/usr/bin/python3", source + "/test/support/check_deploy.py", source, DOWNPOUR_BINARY},
                dir / "check.log");
  const int code = check.wait(120s);
  CAPTURE(check.output());
  CHECK(code == 0);
  CHECK(check.output().find("deploy: ok\n") != std::string::npos);
}

}  // namespace test_deploy
