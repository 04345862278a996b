// The LibTorch examples as a user builds them (docs/torch.md): this build,
// made with -DDOWNPOUR_WITH_TORCH=ON, installed under a prefix, each example
// built from its installed copy with find_package(Torch) and
// find_package(Downpour COMPONENTS torch), then trained as 2 ps + 2 worker
// processes. Built without LibTorch, this program is a ctest entry that skips.
#include <doctest/doctest.h>

#include "cluster_procs.hpp"
#include "log_lines.hpp"
#include "package_steps.hpp"

namespace test_torch_package {

using namespace downpour::testing;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

const std::string libdir = DOWNPOUR_INSTALL_LIBDIR;

// This build installed under dir/prefix, and the example's installed copy
// built against it in dir/build; the program's path.
std::string install_and_build(const temp_dir& dir, const std::string& example) {
  const auto prefix = dir / "prefix";
  auto installed = install_into(DOWNPOUR_CMAKE, build_dir, prefix, dir / "install.log");
  REQUIRE_MESSAGE(installed.code == 0, installed.output);
  const std::vector<std::string> files = {libdir + "/libdownpour_torch.a",
                                          "include/downpour/model/torch/torch_model.hpp",
                                          libdir + "/cmake/Downpour/DownpourTorchTargets.cmake"};
  for (const std::string& file : files)
    CHECK_MESSAGE(fs::exists(fs::path(prefix) / file), file);
  const std::string source = prefix + "/share/downpour/examples/" + example;
  auto built = build_against({DOWNPOUR_CMAKE, DOWNPOUR_CXX, dir.str()}, source, prefix,
                             dir / "build");
  REQUIRE_MESSAGE(built.code == 0, built.output);
  return dir / ("build/" + example);
}

// 2 ps + 2 workers of program with options; the chief's final line.
final_line_values train_2_by_2(const temp_dir& dir, const std::string& program,
                              const std::vector<std::string>& options) {
  auto c = make_cluster(2, 2, dir / "cluster", options);
  auto node = [&](const std::string& role, int task) {
    auto args = c.node(role, task, {});
    args[0] = program;
    return args;
  };
  process ps0(node("ps", 0), dir / "ps0.log"), ps1(node("ps", 1), dir / "ps1.log"),
      chief(node("worker", 0), dir / "w0.log"), w1(node("worker", 1), dir / "w1.log");
  CHECK_MESSAGE(chief.wait(300s) == 0, chief.output());
  for (process* p : {&w1, &ps0, &ps1}) CHECK_MESSAGE(p->wait(60s) == 0, p->output());
  const auto trained = final_of(chief.output());
  REQUIRE_MESSAGE(trained, chief.output());
  return *trained;
}

}  // namespace

TEST_CASE("examples/torch_mlp built against an installed Downpour with LibTorch trains on "
          "Fashion-MNIST as 2 ps + 2 worker processes") {
  temp_dir dir("torch-mlp-package");
  const std::string program = install_and_build(dir, "torch_mlp");
  const auto trained = train_2_by_2(dir, program, {"--last-step=200", "--save-checkpoint-secs=0"});
  CHECK(trained.global_step == 200);
  MESSAGE("test accuracy " << trained.test_accuracy);
  CHECK(trained.test_accuracy > 0.6);  // 10 classes: chance is 0.1
  const auto inspected =
      run({program, "inspect", "--checkpoint-dir=" + dir / "cluster"}, dir / "inspect.log");
  CHECK(contains(inspected.output, "torch_mlp"));
  CHECK(contains(inspected.output, "0/weight"));
}

TEST_CASE("examples/torch_embedding built against an installed Downpour with LibTorch learns "
          "planted libsvm data as 2 ps + 2 worker processes") {
  temp_dir dir("torch-embedding-package");
  const std::string program = install_and_build(dir, "torch_embedding");
  auto gen = run({DOWNPOUR_GEN_LIBSVM, "--out", dir / "data", "--train", "20000", "--test", "5000",
                  "--seed", "3", "--vocabulary", "4096", "--informative", "256",
                  "--weight-stddev", "0.5"},
                 dir / "gen.log");
  REQUIRE_MESSAGE(gen.code == 0, gen.output);
  const auto trained = train_2_by_2(
      dir, program,
      {"--data-format=libsvm", "--train-file=" + dir / "data/train.libsvm",
       "--test-file=" + dir / "data/test.libsvm", "--sparse-optimizer=adagrad",
       "--learning-rate=0.3", "--lr-decay-rate=1", "--l2=0", "--last-step=400",
       "--save-checkpoint-secs=0"});
  CHECK(trained.global_step == 400);
  REQUIRE(trained.test_auc);
  MESSAGE("test AUC " << *trained.test_auc);
  CHECK(*trained.test_auc > 0.65);  // a model that learned nothing ranks at random: 0.5
  const auto inspected =
      run({program, "inspect", "--checkpoint-dir=" + dir / "cluster"}, dir / "inspect.log");
  CHECK(contains(inspected.output, "torch_embedding"));
  CHECK(contains(inspected.output, "embedding"));
}

}  // namespace test_torch_package
