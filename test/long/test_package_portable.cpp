// `make package`'s build for a CPU baseline with the model kernels also
// compiled for newer CPUs, which the loader picks at start-up
// (cmake/kernel_dispatch.cmake, docs/library.md): a second compile of the
// model library, hence make test-long.
#include <doctest/doctest.h>

#include "cluster_procs.hpp"
#include "package_steps.hpp"

namespace test_package_portable {

using namespace downpour::testing;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {
const std::string loader = "/lib64/ld-linux-x86-64.so.2";
}  // namespace

TEST_CASE("make package builds for the x86-64 baseline with the model kernels also built for "
          "x86-64-v3, which the loader maps on a CPU that has it") {
  temp_dir dir("portable");
  const auto package_build = dir / "build-package";
  // Through ccache when there is one, paths taken relative to dir: a rerun compiles nothing.
  std::vector<std::string> env = {"CCACHE_BASEDIR=" + dir.str()};
  if (const auto ccache = in_path("ccache"); !ccache.empty())
    env.push_back("CMAKE_CXX_COMPILER_LAUNCHER=" + ccache);
  auto with_env = [&](std::vector<std::string> args) {
    args.insert(args.begin(), env.begin(), env.end());
    return args;
  };
  auto configured = run(with_env({"make", "-C", source_dir.string(),
                                  "PACKAGE_BUILD=" + package_build,
                                  package_build + "/CMakeCache.txt"}),
                        dir / "configure.log");
  REQUIRE_MESSAGE(configured.code == 0, configured.output);
  CHECK(contains(read_text(package_build + "/CMakeCache.txt"), "\nDOWNPOUR_ARCH:STRING=x86-64\n"));
  auto built = run(with_env({DOWNPOUR_CMAKE, "--build", package_build, "--target",
                             "downpour_model", "-j2"}),
                   dir / "build.log", 900s);
  REQUIRE_MESSAGE(built.code == 0, built.output);

  // Both copies of model/ have one name; only the v3 one uses AVX registers.
  const std::string soname = "libdownpour_model.so." DOWNPOUR_PROJECT_VERSION;
  const auto baseline = package_build + "/" + soname;
  const auto v3 = package_build + "/glibc-hwcaps/x86-64-v3/" + soname;
  CHECK_FALSE(contains(run({"objdump", "-d", baseline}, dir / "objdump.log").output, "%ymm"));
  CHECK(contains(run({"objdump", "-d", v3}, dir / "objdump.log").output, "vfmadd"));

  // A program linked to the baseline library: the loader maps the copy for
  // this CPU, and the baseline one when told to ignore glibc-hwcaps/.
  std::ofstream(dir / "main.cpp") << "int main() { return 0; }\n";
  const auto program = dir / "program";
  REQUIRE(run({DOWNPOUR_CXX, dir / "main.cpp", "-o", program, "-Wl,--no-as-needed", baseline,
               "-Wl,-rpath," + package_build},
              dir / "link.log")
              .code == 0);
  const bool has_v3 =
      contains(run({loader, "--help"}, dir / "loader.log").output, "x86-64-v3 (supported");
  CAPTURE(has_v3);
  CHECK(contains(run({loader, "--list", program}, dir / "list.log").output,
                 (has_v3 ? v3 : baseline) + " "));
  CHECK(contains(run({loader, "--glibc-hwcaps-mask", "", "--list", program}, dir / "list.log").output,
                 baseline + " "));
}

}  // namespace test_package_portable
