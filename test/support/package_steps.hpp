// The steps of test_package: commands run to their end, this build installed
// under a prefix, a CMake project built against it, and what a .deb says
// about itself and about the libraries its binary loads.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "subprocess.hpp"

namespace downpour::testing {

// The source tree, and the build under test (CMake defines both for
// test_package and test_package_build).
inline const std::filesystem::path source_dir = DOWNPOUR_SOURCE_DIR;
inline const std::string build_dir = DOWNPOUR_BUILD_DIR;

struct run_result {
  int code = -1;
  std::string output;
};

// Runs a command found in PATH, after any NAME=VALUE words (env(1)), to its
// end; its output is also written to log.
inline run_result run(std::vector<std::string> args, const std::string& log,
                      std::chrono::seconds bound = std::chrono::seconds(300)) {
  args.insert(args.begin(), "/usr/bin/env");
  process p(args, log);
  run_result r;
  r.code = p.wait(bound);
  r.output = p.output();
  return r;
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The full path of name in PATH, "" if it is not there.
inline std::string in_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string d; std::getline(dirs, d, ':');)
    if (!d.empty() && std::filesystem::exists(std::filesystem::path(d) / name))
      return (std::filesystem::path(d) / name).string();
  return "";
}

// This build (build_dir) installed under prefix by cmake.
inline run_result install_into(const std::string& cmake, const std::string& build_dir,
                               const std::string& prefix, const std::string& log) {
  return run({cmake, "--install", build_dir, "--prefix", prefix}, log);
}

// What building a CMake project against an installed Downpour takes.
struct project_build {
  std::string cmake, compiler;
  std::string scratch;  // the test's directory: ccache takes paths relative to it
};

// Configures and builds the project source in binary_dir against the
// Downpour under prefix (and no other), with the compiler of this build,
// through ccache when there is one (so that a rerun compiles nothing). The
// output is the configure's and then the build's.
inline run_result build_against(const project_build& how, const std::string& source,
                                const std::string& prefix, const std::string& binary_dir,
                                const std::vector<std::string>& defines = {}) {
  const std::string base = "CCACHE_BASEDIR=" + how.scratch;
  std::vector<std::string> configure = {
      base, how.cmake, "-S", source, "-B", binary_dir, "-DCMAKE_PREFIX_PATH=" + prefix,
      "-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF", "-DCMAKE_CXX_COMPILER=" + how.compiler,
      "-DCMAKE_BUILD_TYPE=Release"};
  if (const auto ccache = in_path("ccache"); !ccache.empty())
    configure.push_back("-DCMAKE_CXX_COMPILER_LAUNCHER=" + ccache);
  configure.insert(configure.end(), defines.begin(), defines.end());
  auto configured = run(configure, binary_dir + "-configure.log");
  if (configured.code != 0) return configured;
  auto built = run({base, how.cmake, "--build", binary_dir, "-j2"}, binary_dir + "-build.log");
  built.output = configured.output + built.output;
  return built;
}

// The .deb files in dir (none if there is no dir).
inline std::vector<std::string> debs_in(const std::string& dir) {
  std::vector<std::string> debs;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".deb") debs.push_back(e.path().string());
  return debs;
}

// The fields of a .deb's control file (dpkg-deb -f).
inline std::map<std::string, std::string> control_fields(const std::string& deb,
                                                         const std::string& log) {
  std::map<std::string, std::string> fields;
  std::istringstream in(run({"dpkg-deb", "-f", deb}, log).output);
  std::string name;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] == ' ')
      fields[name] += line;
    else if (auto colon = line.find(": "); colon != std::string::npos)
      fields[name = line.substr(0, colon)] = line.substr(colon + 2);
  }
  return fields;
}

// The package names of a Depends field ("a (>= 1), b | c" -> a, b, c).
inline std::set<std::string> package_names(const std::string& depends) {
  static const std::regex name(R"((?:^|[,|])\s*([a-z0-9][a-z0-9+.-]*))");
  std::set<std::string> names;
  for (std::sregex_iterator it(depends.begin(), depends.end(), name), end; it != end; ++it)
    names.insert((*it)[1]);
  return names;
}

// The paths dpkg may know a library file by: as given, its target if it is a
// symlink, and with or without /usr in front (usrmerge).
inline std::vector<std::string> dpkg_candidates(const std::string& path) {
  if (path.empty()) return {};
  const bool in_usr = path.rfind("/usr/", 0) == 0;
  return {path, std::filesystem::weakly_canonical(path).string(),
          in_usr ? path.substr(4) : "/usr" + path};
}

// For each shared library the executable needs directly (readelf's NEEDED,
// resolved by ldd), the Debian package that holds it ("" if none): own_package
// for one under own_root (the unpacked package itself). One dpkg -S for all
// of them: each call reads the whole package database.
inline std::map<std::string, std::string> needed_packages(const std::string& exe,
                                                          const std::string& own_root,
                                                          const std::string& own_package,
                                                          const std::string& log) {
  static const std::regex needed(R"(\(NEEDED\).*\[([^\]]+)\])");
  static const std::regex resolved(R"(^\s*(\S+) => (/\S+))");
  static const std::regex owned(R"(^([a-z0-9][a-z0-9+.-]*)(:[a-z0-9]+)?: (/\S+)$)");
  const auto elf = run({"readelf", "-d", exe}, log).output;
  std::istringstream ldd(run({"ldd", exe}, log).output);
  std::map<std::string, std::string> paths, owners, package_of;
  std::smatch m;
  for (std::string line; std::getline(ldd, line);)
    if (std::regex_search(line, m, resolved)) paths[m[1]] = m[2];
  std::vector<std::string> query = {"dpkg", "-S"};
  for (std::sregex_iterator it(elf.begin(), elf.end(), needed), end; it != end; ++it) {
    const auto& path = paths[(*it)[1]];
    owners[(*it)[1]] = path.rfind(own_root, 0) == 0 ? own_package : "";
    if (owners[(*it)[1]].empty())
      for (const auto& candidate : dpkg_candidates(path)) query.push_back(candidate);
  }
  std::istringstream found(run(query, log).output);  // exit 1: some candidates are unknown
  for (std::string line; std::getline(found, line);)
    if (std::regex_match(line, m, owned)) package_of[m[3]] = m[1];
  for (auto& [soname, owner] : owners)
    for (const auto& candidate : dpkg_candidates(paths[soname]))
      if (owner.empty() && package_of.count(candidate)) owner = package_of[candidate];
  return owners;
}

}  // namespace downpour::testing
