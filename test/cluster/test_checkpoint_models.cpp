// Checkpoints name their model: kind, spec and variables are stored (format
// 2), a format-1 file of the MLP (written by the build before models had
// names) still reads and restores, and another model's checkpoint is refused
// in one line naming both.
#include <doctest/doctest.h>

#include <filesystem>
#include <sstream>

#include "model/init.hpp"
#include "model/mlp_spec.hpp"
#include "runtime/files/checkpoint.hpp"
#include "runtime/node/reference_trainer.hpp"
#include "subprocess.hpp"
#include "test_jobs.hpp"

namespace test_checkpoint_models {

using namespace downpour;
using namespace downpour::testing;
namespace fs = std::filesystem;

namespace {

// model.ckpt-5 of `downpour --hidden-units=2 --last-step=5` (one ps, one
// worker, --pipeline=off) built from commit 0d6c81f: checkpoint format 1.
const std::string format1_file = DOWNPOUR_SOURCE_DIR "/test/data/format1/model.ckpt-5";

std::string refusal(const checkpoint& c, const model_layout& job) {
  try {
    check_layout(c, job, "DIR/model.ckpt-200");
  } catch (const checkpoint_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a checkpoint stores its model's kind, spec and variables and reads them back") {
  temp_dir dir("ckpt-models");
  const model_layout custom("logreg", "7-3",
                            {{"dense/kernel", 7, 3, {}, true}, {"dense/bias", 1, 3, {}, false}});
  checkpoint c{
      custom, 12, "ssp", 1718000000.0, initial_parameters(custom, 1), initial_parameters(custom, 2),
      {}, {}};
  const std::string path = save_checkpoint(dir.str(), c, 5);
  const checkpoint back = read_checkpoint(path);
  CHECK(back.layout == custom);
  CHECK(back.layout.variables()[1].offset == 21);
  const checkpoint_info info = inspect_checkpoint(path);
  CHECK(info.format_version == 2);
  CHECK(info.kind == "logreg");
  CHECK(info.spec == "7-3");
  REQUIRE(info.variables.size() == 2);
  CHECK(info.variables[0].name == "dense/kernel");
}

TEST_CASE("a format-1 checkpoint of the MLP reads as the MLP it names") {
  const checkpoint c = read_checkpoint(format1_file);
  CHECK(c.layout == mlp_spec{784, {2}, 10}.layout("mlp"));
  CHECK(c.layout.to_string() == "mlp 784-2-10");
  CHECK(c.global_step == 5);
  CHECK(c.params.size() == 1600);
  const checkpoint_info info = inspect_checkpoint(format1_file);
  CHECK(info.format_version == 1);
  CHECK(info.kind == "mlp");
  CHECK(info.spec == "784-2-10");
}

TEST_CASE("a job restores a format-1 checkpoint of its MLP and trains on bit for bit") {
  temp_dir dir("ckpt-format1");
  fs::copy_file(format1_file, dir / "model.ckpt-5");
  options o = local_job(1, 1, 12, dir.str());
  o.hidden_units = {2};
  const job_model job = job_for(o);
  auto got = run_local(o, job);
  REQUIRE(got);
  CHECK(got->summary.global_step == 12);
  const checkpoint start = read_checkpoint(format1_file);
  std::ostringstream log;
  auto expected = run_reference(o, job, log, reference_start{5, start.params, start.ema});
  const checkpoint last = final_checkpoint(o);
  CHECK(inspect_checkpoint(dir / "model.ckpt-12").format_version == 2);
  CHECK(holds_bits_of(last, expected));
}

TEST_CASE("restoring another model's checkpoint is refused in one line naming both") {
  const model_layout seed = mlp_spec{}.layout("mlp");
  const checkpoint c{seed, 200, "async", 0.0, {}, {}, {}, {}};
  CHECK(refusal(c, mlp_spec{784, {}, 10}.layout("softmax")) ==
        "checkpoint DIR/model.ckpt-200 holds mlp 784-500-10, this job trains softmax 784-10");
  CHECK(refusal(c, mlp_spec{784, {500, 300}, 10}.layout("mlp")) ==
        "checkpoint DIR/model.ckpt-200 holds mlp 784-500-10, this job trains mlp "
        "784-500-300-10");
  CHECK(refusal(c, seed).empty());
  // Named alike, the models differ in their variables: those are named.
  const checkpoint a{
      model_layout("net", "1", {{"w", 2, 2, {}, false}}), 200, "async", 0.0, {}, {}, {}, {}};
  CHECK(refusal(a, model_layout("net", "1", {{"v", 2, 2, {}, false}})) ==
        "checkpoint DIR/model.ckpt-200 holds net 1 (w 2x2), this job trains net 1 (v 2x2)");
}

}  // namespace test_checkpoint_models
