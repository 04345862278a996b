// Checkpoints in use: restore into another layout, resume after kill -9,
// corrupt files, shape checks, eval against the training's own numbers.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "log_lines.hpp"
#include "runtime/files/checkpoint.hpp"
#include "runtime/node/node.hpp"
#include "runtime/node/reference_trainer.hpp"
#include "subprocess.hpp"
#include "test_jobs.hpp"

namespace test_resume {

using namespace downpour;
using downpour::testing::process;
using downpour::testing::holds_bits_of;
using downpour::testing::local_job;
using downpour::testing::run_local_job;
using downpour::testing::temp_dir;
using downpour::testing::final_of;
using downpour::testing::restored_step;
using namespace std::chrono_literals;

namespace {

std::vector<std::string> binary(std::vector<std::string> args) {
  args.insert(args.begin(), DOWNPOUR_BINARY);
  return args;
}

}  // namespace

TEST_CASE("a checkpoint from two shards restores bit-exact into three shards") {
  temp_dir dir("restore-layout");
  REQUIRE(run_local_job(local_job(2, 1, 60, dir.str())));
  auto at60 = read_checkpoint(dir / "model.ckpt-60");
  CHECK(at60.global_step == 60);
  auto resumed = run_local_job(local_job(3, 1, 100, dir.str()));
  REQUIRE(resumed);
  CHECK(resumed->summary.global_step == 100);
  std::ostringstream log;
  const options one = local_job(1, 1, 100, dir.str());
  auto expected = run_reference(one, downpour::testing::job_for(one), log,
                                reference_start{60, at60.params, at60.ema});
  CHECK(holds_bits_of(read_checkpoint(dir / "model.ckpt-100"), expected));
}

TEST_CASE("a sync checkpoint holds exactly the parameters after its global step") {
  temp_dir dir("sync-exact");
  auto job = [&](std::int64_t steps, const std::string& d) {
    auto o = local_job(2, 2, steps, d);
    o.mode = train_mode::sync;
    o.save_checkpoint_steps = 20;
    return o;
  };
  REQUIRE(run_local_job(job(40, dir / "short")));
  REQUIRE(run_local_job(job(80, dir / "long")));
  auto mid = read_checkpoint(dir / "long/model.ckpt-40");
  CHECK(mid.mode == "sync");
  CHECK(holds_bits_of(read_checkpoint(dir / "short/model.ckpt-40"), mid));
}

TEST_CASE("a local run killed with -9 resumes from its newest checkpoint and ends at the last step") {
  temp_dir dir("kill-resume");
  auto args = binary({"--last-step=3000", "--save-checkpoint-steps=500", "--save-checkpoint-secs=0",
                      "--quiet", "--log-every=100000", "--checkpoint-dir=" + dir.str()});
  {
    process first(args, dir / "first.log");
    REQUIRE(first.wait_for_output("model.ckpt-1000", 120s));
    first.kill(SIGKILL);
    CHECK(first.wait(30s) == 128 + SIGKILL);
  }
  process second(args, dir / "second.log");
  CHECK(second.wait(300s) == 0);
  auto out = second.output();
  CHECK(restored_step(out) >= 1000);
  CHECK(out.find("final: global_step=3000 ") != std::string::npos);
  CHECK(read_checkpoint(dir / "model.ckpt-3000").global_step == 3000);
}

TEST_CASE("a corrupt newest checkpoint is reported by name and the one before it is used") {
  temp_dir dir("corrupt");
  auto o = local_job(1, 1, 200, dir.str());
  o.save_checkpoint_steps = 100;
  REQUIRE(run_local_job(o));
  {
    std::fstream f(dir / "model.ckpt-200", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100000);
    f.put('\x5a');
  }
  process p(binary({"--last-step=300", "--quiet", "--checkpoint-dir=" + dir.str()}), dir / "p.log");
  CHECK(p.wait(120s) == 0);
  auto out = p.output();
  CHECK(out.find("model.ckpt-200: checksum mismatch") != std::string::npos);
  CHECK(out.find("using model.ckpt-100") != std::string::npos);
  CHECK(out.find("at global step 100") != std::string::npos);
  CHECK(out.find("final: global_step=300 ") != std::string::npos);
}

TEST_CASE("a job already at its last step says so and exits 0") {
  temp_dir dir("at-end");
  REQUIRE(run_local_job(local_job(1, 1, 30, dir.str())));
  process p(binary({"--last-step=30", "--quiet", "--checkpoint-dir=" + dir.str()}), dir / "p.log");
  CHECK(p.wait(60s) == 0);
  CHECK(p.output().find("already at its last step 30") != std::string::npos);
  // Nothing was trained, so there is no loss to report (not a made-up 0).
  CHECK(p.output().find("final: global_step=30 loss=none ") != std::string::npos);
  std::ifstream summary(dir / "summary.json");
  const std::string json(std::istreambuf_iterator<char>(summary), {});
  CHECK(json.find("\"loss\": null,") != std::string::npos);
}

TEST_CASE("a checkpoint of another model is refused in one line naming both models") {
  temp_dir dir("shape");
  auto o = local_job(1, 1, 10, dir.str());
  o.hidden_units = {50};
  REQUIRE(run_local_job(o));
  const std::string line = "checkpoint " + dir / "model.ckpt-10" + " holds mlp 784-50-10, ";
  process p(binary({"--last-step=20", "--quiet", "--checkpoint-dir=" + dir.str()}), dir / "p.log");
  CHECK(p.wait(60s) == 1);
  CHECK(p.output().find(line + "this job trains mlp 784-500-10\n") != std::string::npos);
  process softmax(binary({"--last-step=20", "--quiet", "--model=softmax",
                          "--checkpoint-dir=" + dir.str()}),
                  dir / "softmax.log");
  CHECK(softmax.wait(60s) == 1);
  CHECK(softmax.output().find(line + "this job trains softmax 784-10\n") != std::string::npos);
}

TEST_CASE("eval of the final checkpoint prints the accuracies of the training's final line") {
  temp_dir dir("eval");
  process train(binary({"--last-step=200", "--quiet", "--checkpoint-dir=" + dir.str()}),
                dir / "train.log");
  REQUIRE(train.wait(120s) == 0);
  const auto final = final_of(train.output());
  REQUIRE(final);
  CHECK(final->global_step == 200);
  process eval(binary({"eval", "--checkpoint-dir=" + dir.str()}), dir / "eval.log");
  REQUIRE(eval.wait(60s) == 0);
  CHECK(eval.output().find("eval: global_step=200 " + final->accuracies) != std::string::npos);
}

}  // namespace test_resume
