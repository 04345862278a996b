#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "reporting/log.hpp"
#include "config/options.hpp"

using namespace downpour;
namespace fs = std::filesystem;

namespace {

const fs::path source_dir = DOWNPOUR_SOURCE_DIR;

std::string read_page(const fs::path& path) {
  std::ifstream file(path);
  REQUIRE_MESSAGE(file, path.string());
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

std::set<std::string> options_in(const std::string& text, const std::regex& pattern) {
  std::set<std::string> names;
  std::istringstream in(text);
  std::string line;
  std::smatch m;
  while (std::getline(in, line))
    if (std::regex_search(line, m, pattern)) names.insert(m[1]);
  return names;
}

// The lines of a page outside ``` fences: what markdown renders as text,
// links and headings.
std::vector<std::string> unfenced_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  bool fenced = false;
  while (std::getline(in, line)) {
    if (line.rfind("```", 0) == 0)
      fenced = !fenced;
    else if (!fenced)
      lines.push_back(line);
  }
  return lines;
}

// The same, with `code spans` removed (they hold no links).
std::vector<std::string> prose_lines(const std::string& text) {
  static const std::regex code_span("`[^`]*`");
  auto lines = unfenced_lines(text);
  for (auto& line : lines) line = std::regex_replace(line, code_span, "");
  return lines;
}

// GitHub's anchor of a heading: lower case, punctuation dropped, spaces as
// hyphens; a repeated heading gets -1, -2, ...
std::set<std::string> anchors_of(const std::string& text) {
  std::set<std::string> anchors;
  for (const auto& line : unfenced_lines(text)) {
    if (line.rfind("#", 0) != 0) continue;
    std::string slug;
    for (char c : line.substr(line.find_first_not_of("# ")))
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_')
        slug += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      else if (c == ' ')
        slug += '-';
    auto unique = slug;
    for (int n = 1; anchors.count(unique) > 0; ++n) unique = slug + "-" + std::to_string(n);
    anchors.insert(unique);
  }
  return anchors;
}

// Every relative link of `text` (a page in `dir`) whose file, or whose
// #anchor in a markdown page, does not exist.
std::vector<std::string> broken_links(const std::string& text, const fs::path& dir) {
  std::vector<std::string> broken;
  static const std::regex link(R"(\]\(([^)\s]+)\))");
  for (const auto& line : prose_lines(text)) {
    for (std::sregex_iterator it(line.begin(), line.end(), link), end; it != end; ++it) {
      const std::string target = (*it)[1];
      if (target.find("://") != std::string::npos || target.rfind("mailto:", 0) == 0)
        continue;
      const auto hash = target.find('#');
      const auto file = target.substr(0, hash);
      const auto path = file.empty() ? fs::path() : dir / file;
      if (!file.empty() && !fs::exists(path)) {
        broken.push_back(target);
      } else if (hash != std::string::npos && (file.empty() || path.extension() == ".md")) {
        const auto page = file.empty() ? text : read_page(path);
        if (anchors_of(page).count(target.substr(hash + 1)) == 0) broken.push_back(target);
      }
    }
  }
  return broken;
}

// The folders named in the first column of the README's source map table.
std::vector<std::string> source_map_folders(const std::string& readme) {
  const auto begin = readme.find("\n## Source map\n");
  REQUIRE_MESSAGE(begin != std::string::npos, "the README has no '## Source map' section");
  const auto end = readme.find("\n## ", begin + 1);
  std::vector<std::string> folders;
  std::istringstream in(readme.substr(begin, end - begin));
  std::string line;
  std::smatch m;
  static const std::regex row(R"(^\| `([^`]+)/` \|)");
  while (std::getline(in, line))
    if (std::regex_search(line, m, row)) folders.push_back(m[1]);
  return folders;
}

std::vector<std::string> missing_folders(const std::vector<std::string>& folders,
                                         const fs::path& root) {
  std::vector<std::string> missing;
  for (const auto& f : folders)
    if (!fs::is_directory(root / f)) missing.push_back(f);
  return missing;
}

// Every `folder/path` of the repository named in a code span of `text` that
// does not exist; a * in the file name matches any characters.
std::vector<std::string> missing_source_paths(const std::string& text) {
  std::vector<std::string> missing;
  static const std::regex span("`([^`]+)`");
  static const std::regex source_path(
      "(config|data|model|actors|runtime|test|bench|fuzz|examples|deploy|scripts|docs|cmake)"
      "/[A-Za-z0-9_./*@-]*");
  for (const auto& line : unfenced_lines(text)) {
    for (std::sregex_iterator it(line.begin(), line.end(), span), end; it != end; ++it) {
      const std::string name = (*it)[1];
      if (!std::regex_match(name, source_path)) continue;
      const auto path = source_dir / name;
      bool found = name.back() == '/' && fs::is_directory(path);
      if (name.back() != '/' && fs::is_directory(path.parent_path())) {
        // The name's only special characters: . and *.
        const std::regex pattern(std::regex_replace(
            std::regex_replace(path.filename().string(), std::regex(R"(\.)"), R"(\.)"),
            std::regex(R"(\*)"), ".*"));
        for (const auto& entry : fs::directory_iterator(path.parent_path()))
          found = found || std::regex_match(entry.path().filename().string(), pattern);
      }
      if (!found) missing.push_back(name);
    }
  }
  return missing;
}

// README.md and every page of docs/.
std::vector<fs::path> doc_pages() {
  std::vector<fs::path> pages{source_dir / "README.md"};
  for (const auto& entry : fs::directory_iterator(source_dir / "docs"))
    if (entry.path().extension() == ".md") pages.push_back(entry.path());
  return pages;
}

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

}  // namespace

TEST_CASE("the option table of docs/options.md lists exactly the options of --help") {
  auto table = read_page(source_dir / "docs/options.md");
  auto documented = options_in(table, std::regex(R"(^\| `(--[a-z0-9_-]+))"));
  auto offered = options_in(help_text(), std::regex(R"(^  (--[a-z0-9_-]+))"));
  CHECK(offered.size() > 30);
  CHECK(documented == offered);
}

TEST_CASE("the README starts with the two set-up commands") {
  const auto text = read_page(source_dir / "README.md");
  auto run = text.find("make run"), test = text.find("make test");
  REQUIRE(run != std::string::npos);
  REQUIRE(test != std::string::npos);
  CHECK(run < test);
}

TEST_CASE("the README's excerpt of make run is in the log format and ends with the final line") {
  const auto text = read_page(source_dir / "README.md");
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

TEST_CASE("the README is an entry point of at most 250 lines") {
  const auto text = read_page(source_dir / "README.md");
  const auto lines = std::count(text.begin(), text.end(), '\n');
  CHECK_MESSAGE(lines <= 250, "README.md has " << lines << " lines; move reference text to docs/");
}

TEST_CASE("every relative link of the README and of docs/ points to a file and heading that exist") {
  const auto pages = doc_pages();
  CHECK(pages.size() > 5);
  for (const auto& page : pages) {
    const auto broken = broken_links(read_page(page), page.parent_path());
    CHECK_MESSAGE(broken.empty(), page.string() << ": broken links: " << joined(broken));
  }
}

TEST_CASE("the link check names a planted broken link and a planted broken anchor") {
  const std::string page =
      "# Title\n[ok](docs/options.md) [gone](docs/no-such-page.md) [here](#title)\n"
      "[anchor](docs/options.md#options) [lost](docs/options.md#no-such-heading)\n"
      "```\n[in code](no-such-file.md)\n```\n[web](https://example.org/x)\n";
  CHECK(broken_links(page, source_dir) ==
        std::vector<std::string>{"docs/no-such-page.md", "docs/options.md#no-such-heading"});
}

TEST_CASE("every folder of the README's source map exists, and every folder of runtime/ is in it") {
  const auto folders = source_map_folders(read_page(source_dir / "README.md"));
  CHECK(folders.size() >= 8);
  const auto missing = missing_folders(folders, source_dir);
  CHECK_MESSAGE(missing.empty(), "the source map names missing folders: " << joined(missing));
  std::vector<std::string> unmapped;
  for (const auto& entry : fs::directory_iterator(source_dir / "runtime")) {
    const auto name = "runtime/" + entry.path().filename().string();
    if (entry.is_directory() && std::count(folders.begin(), folders.end(), name) == 0)
      unmapped.push_back(name);
  }
  CHECK_MESSAGE(unmapped.empty(), "folders missing from the source map: " << joined(unmapped));
}

TEST_CASE("the source map check names a planted folder that does not exist") {
  const std::string readme =
      "# X\n## Source map\n| folder | holds |\n| --- | --- |\n| `docs/` | pages |\n"
      "| `no-such-folder/` | nothing |\n## Next\n| `also-not/` | outside the map |\n";
  const auto folders = source_map_folders(readme);
  CHECK(folders == std::vector<std::string>{"docs", "no-such-folder"});
  CHECK(missing_folders(folders, source_dir) == std::vector<std::string>{"no-such-folder"});
}

TEST_CASE("every source path named in the README and docs/ exists") {
  const auto pages = doc_pages();
  for (const auto& page : pages) {
    const auto missing = missing_source_paths(read_page(page));
    CHECK_MESSAGE(missing.empty(), page.string() << ": names missing paths: " << joined(missing));
  }
}

TEST_CASE("the source path check names a planted file that does not exist") {
  const std::string page = "`test/unit/test_readme.cpp`, `fuzz/*.supp`, `docs/` and `config/`;\n"
                           "`test/no_such_test.cpp`, `runtime/no_such_guard.*`, `DIR/model.ckpt`\n";
  CHECK(missing_source_paths(page) ==
        std::vector<std::string>{"test/no_such_test.cpp", "runtime/no_such_guard.*"});
}
