// Downpour as something installed (cmake/package.cmake, docs/library.md): a
// prefix from `cmake --install` that a separate project builds against, the
// Debian package, the version both carry, and `make package`'s CPU baseline.
#include <doctest/doctest.h>

#include "cluster_procs.hpp"
#include "log_lines.hpp"
#include "package_steps.hpp"

namespace test_package {

using namespace downpour::testing;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

const std::string libdir = DOWNPOUR_INSTALL_LIBDIR;

void install(const temp_dir& dir, const std::string& prefix) {
  auto r = install_into(DOWNPOUR_CMAKE, build_dir, prefix, dir / "install.log");
  REQUIRE_MESSAGE(r.code == 0, r.output);
}

project_build against_this_build(const temp_dir& dir) {
  return {DOWNPOUR_CMAKE, DOWNPOUR_CXX, dir.str()};
}

void check_files(const fs::path& root, const std::vector<std::string>& files) {
  for (const auto& file : files) CHECK_MESSAGE(fs::exists(root / file), (root / file).string());
}

// A local job of program to last_step with options, its checkpoints in
// checkpoint_dir.
run_result train_locally(const std::string& program, const std::vector<std::string>& options,
                         int last_step, const std::string& checkpoint_dir, const std::string& log) {
  std::vector<std::string> args = {program, "--last-step=" + std::to_string(last_step),
                                   "--checkpoint-dir=" + checkpoint_dir, "--quiet"};
  args.insert(args.end(), options.begin(), options.end());
  process p(args, log);
  return {p.wait(120s), p.output()};
}

}  // namespace

TEST_CASE("cmake --install puts the binary, one library, headers that compile alone, the package "
          "config and the man page under a prefix") {
  temp_dir dir("install");
  const auto prefix = dir / "prefix";
  install(dir, prefix);
  check_files(prefix, {"bin/downpour", "bin/downpour-make-certs", libdir + "/libdownpour.a",
                       "include/downpour/model/model.hpp", "include/downpour/runtime/cli/app.hpp",
                       libdir + "/cmake/Downpour/DownpourConfig.cmake",
                       libdir + "/cmake/Downpour/DownpourConfigVersion.cmake",
                       "share/man/man1/downpour.1", "share/downpour/examples/cluster_async.ini",
                       "share/downpour/examples/custom_model/CMakeLists.txt",
                       "share/downpour/examples/embedding_model/CMakeLists.txt",
                       "include/downpour/model/network_model.hpp",
                       "include/downpour/model/layers/dense.hpp"});
  CHECK_FALSE(fs::exists(fs::path(prefix) / "include/downpour/actors"));
  // Eigen is not found and not on the include path: a public header that
  // includes it fails to compile.
  auto headers = build_against(against_this_build(dir), source_dir / "test/package/headers",
                               prefix, dir / "headers",
                               {"-DDOWNPOUR_VERSION=" DOWNPOUR_PROJECT_VERSION,
                                "-DCMAKE_DISABLE_FIND_PACKAGE_Eigen3=ON"});
  CHECK_MESSAGE(headers.code == 0, headers.output);
  CHECK(contains(headers.output, "Downpour_DIR: " + prefix + "/" + libdir + "/cmake/Downpour"));
}

TEST_CASE("a model built against an installed Downpour trains in one process and as 1 ps + 2 "
          "worker processes to its last step, and resumes from its checkpoint") {
  temp_dir dir("custom-model");
  const auto prefix = dir / "prefix";
  install(dir, prefix);
  auto built = build_against(against_this_build(dir), source_dir / "examples/custom_model", prefix,
                             dir / "build");
  REQUIRE_MESSAGE(built.code == 0, built.output);
  const std::string program = dir / "build/custom_model";
  auto csv = run({DOWNPOUR_PYTHON, (source_dir / "scripts/make-csv").string(), "--seed=3",
                  "--features=20", "--classes=3", "--train=3000", "--test=500", dir / "data"},
                 dir / "make-csv.log");
  REQUIRE_MESSAGE(csv.code == 0, csv.output);
  const std::vector<std::string> data = {
      "--data-format=csv", "--train-file=" + dir / "data/train.csv",
      "--test-file=" + dir / "data/test.csv", "--csv-label=last", "--validation-size=300",
      "--learning-rate=0.1", "--save-checkpoint-secs=0"};

  const auto first = train_locally(program, data, 300, dir / "local", dir / "local.log");
  CHECK_MESSAGE(first.code == 0, first.output);
  const auto trained = final_of(first.output);
  REQUIRE_MESSAGE(trained, first.output);
  CHECK(trained->global_step == 300);
  CHECK(trained->test_accuracy > 0.6);  // 3 planted classes: chance is 1/3
  const auto inspected =
      run({program, "inspect", "--checkpoint-dir=" + dir / "local"}, dir / "inspect.log");
  CHECK(contains(inspected.output, "two_layer"));
  CHECK(contains(inspected.output, "hidden/weights"));

  const auto resumed = train_locally(program, data, 400, dir / "local", dir / "resume.log");
  CHECK_MESSAGE(resumed.code == 0, resumed.output);
  CHECK(restored_step(resumed.output) == 300);
  REQUIRE(final_of(resumed.output));
  CHECK(final_of(resumed.output)->global_step == 400);

  auto c = make_cluster(1, 2, dir / "cluster", data);
  auto node = [&](const std::string& role, int task) {
    auto args = c.node(role, task, {"--last-step=1000"});
    args[0] = program;
    return args;
  };
  // Worker 1 first, waiting for the chief: this model trains 200 steps in
  // about 40 ms, and a listed worker that comes after the job ended cannot
  // tell it from a lost chief (it exits 1 after --connect-timeout).
  process ps(node("ps", 0), dir / "ps0.log"), w1(node("worker", 1), dir / "w1.log");
  process chief(node("worker", 0), dir / "w0.log");
  CHECK_MESSAGE(chief.wait(120s) == 0, chief.output());
  CHECK_MESSAGE(w1.wait(60s) == 0, w1.output());
  CHECK_MESSAGE(ps.wait(60s) == 0, ps.output());
  REQUIRE_MESSAGE(final_of(chief.output()), chief.output());
  CHECK(final_of(chief.output())->global_step == 1000);
}

TEST_CASE("a model with an embedding table built against an installed Downpour learns planted "
          "libsvm data as 2 ps + 2 worker processes") {
  temp_dir dir("embedding-model");
  const auto prefix = dir / "prefix";
  install(dir, prefix);
  auto built = build_against(against_this_build(dir), source_dir / "examples/embedding_model",
                             prefix, dir / "build");
  REQUIRE_MESSAGE(built.code == 0, built.output);
  // The README's data and job, shorter.
  auto gen = run({DOWNPOUR_GEN_LIBSVM, "--out", dir / "data", "--train", "20000", "--test", "5000",
                  "--seed", "3", "--vocabulary", "4096", "--informative", "256",
                  "--weight-stddev", "0.5"},
                 dir / "gen.log");
  REQUIRE_MESSAGE(gen.code == 0, gen.output);
  auto c = make_cluster(2, 2, dir / "cluster",
                        {"--data-format=libsvm", "--train-file=" + dir / "data/train.libsvm",
                         "--test-file=" + dir / "data/test.libsvm", "--sparse-rows=4096",
                         "--learning-rate=0.1", "--lr-decay-rate=1", "--last-step=400",
                         "--save-checkpoint-secs=0"});
  auto node = [&](const std::string& role, int task) {
    auto args = c.node(role, task, {});
    args[0] = dir / "build/embedding_model";
    return args;
  };
  process ps0(node("ps", 0), dir / "ps0.log"), ps1(node("ps", 1), dir / "ps1.log"),
      chief(node("worker", 0), dir / "w0.log"), w1(node("worker", 1), dir / "w1.log");
  CHECK_MESSAGE(chief.wait(120s) == 0, chief.output());
  for (process* p : {&w1, &ps0, &ps1}) CHECK_MESSAGE(p->wait(60s) == 0, p->output());
  const auto trained = final_of(chief.output());
  REQUIRE_MESSAGE(trained, chief.output());
  CHECK(trained->global_step == 400);
  // A model that learned nothing ranks at random: AUC 0.5.
  REQUIRE(trained->test_auc);
  MESSAGE("test AUC " << *trained->test_auc);
  CHECK(*trained->test_auc > 0.65);  // 0.75 in the run this was set from
  const auto inspected =
      run({dir / "build/embedding_model", "inspect", "--checkpoint-dir=" + dir / "cluster"},
          dir / "inspect.log");
  CHECK(contains(inspected.output, "embedding_model"));
  CHECK(contains(inspected.output, "embedding"));
}

TEST_CASE("the Debian package holds what cmake --install does, depends on the package of every "
          "library its binary loads, has the binary's version and runs a job unpacked") {
  temp_dir dir("deb");
  auto packed = run({DOWNPOUR_CPACK, "-G", "DEB", "-D", "DOWNPOUR_PACKAGE_NATIVE=ON", "-B",
                     dir / "out", "--config", build_dir + "/CPackConfig.cmake"},
                    dir / "cpack.log");
  REQUIRE_MESSAGE(packed.code == 0, packed.output);
  const auto debs = debs_in(dir / "out");
  REQUIRE(debs.size() == 1);
  auto fields = control_fields(debs[0], dir / "fields.log");
  CHECK(fields["Package"] == "downpour");
  REQUIRE(run({"dpkg-deb", "-x", debs[0], dir / "root"}, dir / "unpack.log").code == 0);
  const fs::path usr = dir / "root/usr";
  check_files(usr, {"bin/downpour", "bin/downpour-make-certs", libdir + "/libdownpour.a",
                    "include/downpour/model/model.hpp",
                    libdir + "/cmake/Downpour/DownpourConfig.cmake", "share/man/man1/downpour.1",
                    "share/downpour/examples/cluster_async.ini"});

  const std::string binary = (usr / "bin/downpour").string();
  const auto version = run({binary, "--version"}, dir / "version.log").output;
  CAPTURE(version);
  CHECK(version.rfind("downpour " + fields["Version"] + " (CAF ", 0) == 0);
  CHECK(std::regex_match(fields["Version"], std::regex("[0-9][A-Za-z0-9.+~]*")));

  CAPTURE(fields["Depends"]);
  auto depends = package_names(fields["Depends"]);
  depends.insert("downpour");  // its own libdownpour_model.so, from a build for a CPU baseline
  const auto owners = needed_packages(binary, dir / "root", "downpour", dir / "needed.log");
  CHECK(owners.size() >= 5);
  for (const auto& [soname, package] : owners)
    CHECK_MESSAGE(depends.count(package) == 1, soname << " comes from package '" << package << "'");

  const auto job = train_locally(binary, {"--save-checkpoint-secs=0"}, 30, dir / "job",
                                 dir / "job.log");
  CHECK_MESSAGE(job.code == 0, job.output);
  REQUIRE_MESSAGE(final_of(job.output), job.output);
  CHECK(final_of(job.output)->global_step == 30);

  // From a build for a CPU baseline: the model library's copy for newer CPUs
  // (test_package_build checks which copy the loader maps).
  const std::string level = DOWNPOUR_KERNEL_LEVELS;  // "" in a build for this machine
  if (!level.empty())
    check_files(usr, {libdir + "/glibc-hwcaps/" + level + "/libdownpour_model.so." +
                      DOWNPOUR_PROJECT_VERSION});
}

namespace {

// The .deb of this build (cmake/package.cmake), in dir/out.
std::string package_this_build(const temp_dir& dir) {
  auto packed = run({DOWNPOUR_CPACK, "-G", "DEB", "-D", "DOWNPOUR_PACKAGE_NATIVE=ON", "-B",
                     dir / "out", "--config", build_dir + "/CPackConfig.cmake"},
                    dir / "cpack.log");
  REQUIRE_MESSAGE(packed.code == 0, packed.output);
  const auto debs = debs_in(dir / "out");
  REQUIRE(debs.size() == 1);
  return debs[0];
}

// A unit as systemd-analyze can verify it outside root: its binary and
// EnvironmentFile at their places under root.
std::string unit_under(const fs::path& root, const std::string& unit, const fs::path& out) {
  std::ifstream in(root / "usr/lib/systemd/system" / unit);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  auto replace = [&](const std::string& from, const std::string& to) {
    for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
      text.replace(at, from.size(), to);
  };
  replace("/usr/bin/downpour", (root / "usr/bin/downpour").string());
  replace("/etc/downpour/cluster.env", (root / "etc/downpour/cluster.env").string());
  std::string instance = unit;
  instance.replace(instance.find('@'), 1, "@0");
  std::ofstream(out / instance) << text;
  return (out / instance).string();
}

}  // namespace

TEST_CASE("the image's runtime stage, assembled in a clean root from the Debian package and "
          "Debian's packages, runs a job as the downpour user; the units it installs verify") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: assembling a root and chroot need root");
    return;
  }
  temp_dir dir("image");
  const auto deb = package_this_build(dir);
  const fs::path root = dir / "root";
  auto assembled = run({"/usr/bin/python3", (source_dir / "test/support/runtime_root.py").string(),
                        (source_dir / "deploy/Dockerfile").string(), deb, root.string()},
                       dir / "assemble.log");
  REQUIRE_MESSAGE(assembled.code == 0, assembled.output);
  // The package's postinst ran there: the user, its state directory, the settings.
  check_files(root, {"usr/bin/downpour", "usr/bin/downpour-make-csv",
                     "usr/bin/downpour-make-certs", "usr/" + libdir + "/libdownpour.a",
                     "usr/lib/systemd/system/downpour-ps@.service",
                     "usr/lib/systemd/system/downpour-worker@.service",
                     "etc/downpour/cluster.env", "var/lib/downpour"});
  CHECK(libdir == "lib/x86_64-linux-gnu");  // Debian's multiarch directory
  const auto passwd = read_text(root / "etc/passwd");
  CHECK(passwd.find("\ndownpour:") != std::string::npos);
  // As the Dockerfile's USER in its WORKDIR, the image's ENTRYPOINT with a short job.
  auto job = run({"chroot", "--userspec=downpour:downpour", root.string(), "/bin/sh", "-c",
                  "cd /var/lib/downpour && exec /usr/bin/downpour --last-step=20 --quiet "
                  "--save-checkpoint-secs=0"},
                 dir / "job.log");
  CHECK_MESSAGE(job.code == 0, job.output);
  REQUIRE_MESSAGE(final_of(job.output), job.output);
  CHECK(final_of(job.output)->global_step == 20);
  CHECK(fs::exists(root / "var/lib/downpour/logs"));

  const std::string analyze = in_path("systemd-analyze");
  if (analyze.empty()) {
    MESSAGE("systemd-analyze is not installed (scripts/install-deps): the units are not verified");
    return;
  }
  for (const std::string unit : {"downpour-ps@.service", "downpour-worker@.service"}) {
    auto verified = run({analyze, "verify", "--man=no", unit_under(root, unit, dir.str())},
                        dir / ("verify-" + unit + ".log"));
    CHECK_MESSAGE(verified.code == 0, verified.output);
    CHECK_MESSAGE(verified.output.empty(), verified.output);
  }
}

}  // namespace test_package
