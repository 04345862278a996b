// The seed's 20000-step job with its MLP written in LibTorch (the example
// examples/torch_mlp/) against the built-in MLP: the same options, seed and
// data in this process, one worker and no pipelining so that neither run
// depends on thread timing.
#include "torch_doctest.hpp"  // first: doctest's CHECK, not glog's

#include <cmath>

#include "subprocess.hpp"
#include "test_jobs.hpp"
#include "torch_mlp/mlp_network.hpp"

namespace test_torch_full_job {

using namespace downpour;
using namespace downpour::testing;

namespace {

options seed_job(const std::string& dir) {
  options o = local_job(1, 1, 20000, dir);
  o.data_dir = DOWNPOUR_DEFAULT_DATA_DIR;
  return o;
}

}  // namespace

TEST_CASE("the LibTorch MLP reaches the built-in MLP's EMA test accuracy within 0.005 at 20000 steps") {
  temp_dir dir("torch-full-job");
  const options builtin_job = seed_job(dir / "builtin");
  const auto builtin = run_local_job(builtin_job);
  REQUIRE(builtin);
  const options torch_job = seed_job(dir / "torch");
  const job_model torch_mlp_job =
      build_job_model(torch_job, load_job_data(torch_job), [](const model_request& r) {
        return make_torch_model(torch_mlp::spec_for(r));
      });
  const auto torch = run_local(torch_job, torch_mlp_job);
  REQUIRE(torch);
  REQUIRE(torch->summary.global_step == 20000);
  MESSAGE("EMA test accuracy: built-in " << builtin->summary.ema_test_accuracy << ", LibTorch "
                                         << torch->summary.ema_test_accuracy << " ("
                                         << builtin->summary.steps_per_s << " vs "
                                         << torch->summary.steps_per_s << " steps/s)");
  CHECK(std::abs(torch->summary.ema_test_accuracy - builtin->summary.ema_test_accuracy) <= 0.005);
  CHECK(torch->summary.ema_test_accuracy >= 0.85);
}

}  // namespace test_torch_full_job
