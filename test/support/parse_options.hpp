// Parsing the command line in tests: the options, or the one config error.
#pragma once

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "config/options.hpp"

namespace downpour::testing {

inline std::optional<options> parse(const std::vector<std::string>& args, std::ostream& out) {
  std::vector<const char*> argv{"downpour"};
  for (const auto& a : args) argv.push_back(a.c_str());
  return parse_options(static_cast<int>(argv.size()), argv.data(), out);
}

inline options parse(const std::vector<std::string>& args) {
  std::ostringstream out;
  auto o = parse(args, out);
  REQUIRE(o.has_value());
  CHECK(out.str().empty());
  return *o;
}

inline std::string error_of(const std::vector<std::string>& args) {
  std::ostringstream out;
  try {
    parse(args, out);
  } catch (const config_error& e) {
    return e.what();
  }
  return "(no error)";
}

// An INI file that removes itself; the name carries the test's purpose so
// parallel test runs do not collide.
struct temp_ini {
  std::filesystem::path path;
  temp_ini(const std::string& name, const std::string& text)
      : path(std::filesystem::temp_directory_path() /
             (name + "-" + std::to_string(::getpid()) + ".ini")) {
    std::ofstream(path) << text;
  }
  ~temp_ini() { std::filesystem::remove(path); }
  std::string str() const { return path.string(); }
};


}  // namespace downpour::testing
