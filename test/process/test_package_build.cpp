// How Downpour is built for installing (cmake/build_version.cmake,
// docs/library.md): the version from the git tag or commit, and what cpack and
// cmake refuse. The portable build itself: test/long/test_package_portable.cpp.
#include <doctest/doctest.h>

#include "cluster_procs.hpp"
#include "package_steps.hpp"

namespace test_package_build {

using namespace downpour::testing;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

// The version cmake/build_version.cmake gives the checkout at repo (project
// version 0.4.0).
std::string version_of(const temp_dir& dir, const std::string& repo) {
  auto r = run({DOWNPOUR_CMAKE, "-DSOURCE_DIR=" + repo, "-DPROJECT_VERSION=0.4.0",
                "-DOUT=" + dir / "version.cpp", "-DOUT_TEXT=" + dir / "version.txt", "-P",
                (source_dir / "cmake/build_version.cmake").string()},
               dir / "version.log");
  REQUIRE_MESSAGE(r.code == 0, r.output);
  const auto text = read_text(dir / "version.txt");
  CHECK(std::regex_match(text, std::regex("[0-9][A-Za-z0-9.+~]*\n")));  // Debian-valid
  return text.substr(0, text.find('\n'));
}

// git in repo, every commit dated 2026-01-02; its output without the newline.
std::string git(const std::string& repo, std::vector<std::string> args) {
  args.insert(args.begin(), {"GIT_COMMITTER_DATE=2026-01-02T03:04:05Z",
                             "GIT_AUTHOR_DATE=2026-01-02T03:04:05Z", "git", "-C", repo, "-c",
                             "user.name=test", "-c", "user.email=test@example.invalid"});
  auto r = run(args, repo + "/../git.log");
  REQUIRE_MESSAGE(r.code == 0, r.output);
  return r.output.substr(0, r.output.find('\n'));
}

// dpkg's order of two versions.
bool older(const std::string& a, const std::string& b) {
  return run({"dpkg", "--compare-versions", a, "lt", b}, "/dev/null").code == 0;
}

}  // namespace

TEST_CASE("the version is X.Y.Z at a release tag vX.Y.Z, else the commit's date and hash after the "
          "tag or before the project version, in dpkg's order") {
  temp_dir dir("version");
  const auto repo = dir / "repo";
  fs::create_directories(repo);
  CHECK(version_of(dir, repo) == "0.4.0");  // not a checkout
  git(repo, {"init", "-q"});
  std::ofstream(repo + "/file") << "one\n";
  git(repo, {"add", "file"});
  git(repo, {"commit", "-q", "-m", "one"});
  const auto first = git(repo, {"rev-parse", "--short=12", "HEAD"});
  const auto snapshot = version_of(dir, repo);
  CHECK(snapshot == "0.4.0~git20260102." + first);
  git(repo, {"tag", "v0.4.0"});
  CHECK(version_of(dir, repo) == "0.4.0");
  std::ofstream(repo + "/file") << "two\n";
  CHECK(version_of(dir, repo) == "0.4.0+git20260102." + first + ".dirty");
  git(repo, {"commit", "-q", "-a", "-m", "two"});
  git(repo, {"tag", "v0.5.0-rc1"});  // not a release tag
  git(repo, {"tag", "nightly"});
  const auto after = version_of(dir, repo);
  CHECK(after == "0.4.0+git20260102." + git(repo, {"rev-parse", "--short=12", "HEAD"}));
  CHECK(older(snapshot, "0.4.0"));
  CHECK(older("0.4.0", after));
  CHECK(older(after, "0.4.1"));
}

TEST_CASE("cpack refuses a build tuned with -march=native") {
  if (std::string(DOWNPOUR_BUILD_ARCH) != "native") return;  // this build may be packaged
  temp_dir dir("cpack-native");
  auto refused = run({DOWNPOUR_CPACK, "-G", "DEB", "-B", dir / "out", "--config",
                      build_dir + "/CPackConfig.cmake"},
                     dir / "cpack.log");
  CHECK(refused.code != 0);
  CHECK(contains(refused.output, "DOWNPOUR_ARCH=native"));
  CHECK(contains(refused.output, "make package"));
  CHECK(debs_in(dir / "out").empty());
}

TEST_CASE("cmake stops with one line naming a DOWNPOUR_ARCH the compiler rejects, and the former "
          "DOWNPOUR_NATIVE=OFF") {
  temp_dir dir("arch");
  for (const std::string bad : {"-DDOWNPOUR_ARCH=no-such-cpu", "-DDOWNPOUR_NATIVE=OFF"}) {
    auto r = run({DOWNPOUR_CMAKE, "-S", source_dir.string(), "-B", dir / bad.substr(2), bad},
                 dir / "configure.log");
    CAPTURE(r.output);
    CHECK(r.code != 0);
    CHECK(contains(r.output, bad.substr(2) + ":"));
    CHECK(contains(r.output, "DOWNPOUR_ARCH=x86-64") == (bad == "-DDOWNPOUR_NATIVE=OFF"));
  }
}

}  // namespace test_package_build
