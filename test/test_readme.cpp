#include <doctest/doctest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "actors/log.hpp"
#include "config/options.hpp"

using namespace downpour;

namespace {

std::set<std::string> options_in(const std::string& text, const std::regex& pattern) {
  std::set<std::string> names;
  std::istringstream in(text);
  std::string line;
  std::smatch m;
  while (std::getline(in, line))
    if (std::regex_search(line, m, pattern)) names.insert(m[1]);
  return names;
}

}  // namespace

TEST_CASE("the README's option table lists exactly the options of --help") {
  std::ifstream file(std::string(DOWNPOUR_SOURCE_DIR) + "/README.md");
  REQUIRE(file);
  std::stringstream readme;
  readme << file.rdbuf();
  auto documented = options_in(readme.str(), std::regex(R"(^\| `(--[a-z0-9_-]+))"));
  auto offered = options_in(help_text(), std::regex(R"(^  (--[a-z0-9_-]+))"));
  CHECK(offered.size() > 30);
  CHECK(documented == offered);
}

TEST_CASE("the README starts with the two set-up commands") {
  std::ifstream file(std::string(DOWNPOUR_SOURCE_DIR) + "/README.md");
  std::stringstream readme;
  readme << file.rdbuf();
  auto text = readme.str();
  auto run = text.find("make run"), test = text.find("make test");
  REQUIRE(run != std::string::npos);
  REQUIRE(test != std::string::npos);
  CHECK(run < test);
}

TEST_CASE("the README's excerpt of make run is in the log format and ends with the final line") {
  std::ifstream file(std::string(DOWNPOUR_SOURCE_DIR) + "/README.md");
  std::stringstream readme;
  readme << file.rdbuf();
  const auto text = readme.str();
  const auto section = text.find("## What `make run` does");
  REQUIRE(section != std::string::npos);
  const auto begin = text.find("```\n", section);
  REQUIRE(begin != std::string::npos);
  const auto end = text.find("```", begin + 4);
  REQUIRE(end != std::string::npos);
  std::istringstream excerpt(text.substr(begin + 4, end - begin - 4));
  std::string line, last;
  int lines = 0;
  while (std::getline(excerpt, line)) {
    CHECK_MESSAGE(parse_log_line(line), line);
    last = line;
    ++lines;
  }
  CHECK(lines >= 3);
  CHECK(last.find(" worker:0 INFO final: global_step=20000 ") != std::string::npos);
}
