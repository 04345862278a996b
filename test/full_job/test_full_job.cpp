// The original job in full (20000 global steps on Fashion-MNIST, async in one
// process, as `make run` trains it) and the built-in CNN's job of
// examples/cnn.ini: the accuracy promises of the README and docs/library.md,
// checked as a user would run them. The other modes: test/long/.
#include <doctest/doctest.h>

#include "full_job_run.hpp"

namespace test_full_job {

using namespace downpour;
using namespace downpour::testing;
using namespace std::chrono_literals;

TEST_CASE("the original async cluster in one process reaches 0.855 at exactly step 20000") {
  temp_dir dir("full-async");
  auto f = run_binary({}, dir);
  CHECK(f.global_step == 20000);
  CHECK(f.ema_test_accuracy >= 0.855);
}

TEST_CASE("the CNN of examples/cnn.ini beats the MLP with 0.88 EMA test accuracy at exactly step 3000") {
  temp_dir dir("full-cnn");
  auto f = run_binary({"--config", std::string(DOWNPOUR_SOURCE_DIR) + "/examples/cnn.ini"}, dir);
  CHECK(f.global_step == 3000);
  CHECK(f.ema_test_accuracy >= 0.88);
}

}  // namespace test_full_job
