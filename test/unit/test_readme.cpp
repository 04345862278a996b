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

namespace test_readme {

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

// The folders at the top of the repository: every directory there but .git
// and the build outputs .gitignore names (build*/, logs/), with the layers of
// scripts/check-layers, so that a page naming a layer that is gone is still
// checked.
bool ignored_folder(const std::string& name) {
  std::ifstream gitignore(source_dir / ".gitignore");
  std::string pattern;
  while (std::getline(gitignore, pattern)) {
    if (pattern.empty() || pattern.back() != '/') continue;
    pattern.pop_back();
    const std::regex glob(std::regex_replace(pattern, std::regex(R"(\*)"), ".*"));
    if (std::regex_match(name, glob)) return true;
  }
  return false;
}

std::set<std::string> repository_folders() {
  std::set<std::string> folders{"config", "data",   "model",   "reporting",
                                "protocol", "actors", "runtime"};
  for (const auto& entry : fs::directory_iterator(source_dir)) {
    const auto name = entry.path().filename().string();
    if (entry.is_directory() && name != ".git" && !ignored_folder(name)) folders.insert(name);
  }
  return folders;
}

// The folders of the repository the source map must name, and does not:
// each top folder but the hidden ones and runtime/, which it names folder
// by folder.
std::vector<std::string> unmapped_folders(const std::vector<std::string>& mapped) {
  std::vector<std::string> expected;
  for (const auto& folder : repository_folders()) {
    if (folder[0] == '.' || !fs::is_directory(source_dir / folder)) continue;
    if (folder != "runtime") {
      expected.push_back(folder);
      continue;
    }
    for (const auto& entry : fs::directory_iterator(source_dir / "runtime"))
      if (entry.is_directory()) expected.push_back("runtime/" + entry.path().filename().string());
  }
  std::vector<std::string> unmapped;
  for (const auto& folder : expected)
    if (std::count(mapped.begin(), mapped.end(), folder) == 0) unmapped.push_back(folder);
  std::sort(unmapped.begin(), unmapped.end());
  return unmapped;
}

// The entries of dir whose names match one path component, where * stands
// for any characters (the only special character besides the dot).
std::vector<fs::path> matching_entries(const fs::path& dir, const std::string& component) {
  if (component.find('*') == std::string::npos)
    return fs::exists(dir / component) ? std::vector<fs::path>{dir / component}
                                       : std::vector<fs::path>{};
  const std::regex pattern(std::regex_replace(
      std::regex_replace(component, std::regex(R"(\.)"), R"(\.)"), std::regex(R"(\*)"), ".*"));
  std::vector<fs::path> found;
  if (fs::is_directory(dir))
    for (const auto& entry : fs::directory_iterator(dir))
      if (std::regex_match(entry.path().filename().string(), pattern)) found.push_back(entry);
  return found;
}

// Whether a repository path exists: "a/b.hpp", "a/b/" (a folder), or a glob
// such as "runtime/net/tls_guard.*" or "test/*/test_*.cpp" matching at least
// one entry.
bool path_exists(const std::string& name) {
  std::vector<fs::path> candidates{source_dir};
  std::istringstream parts(name);
  std::string component;
  while (std::getline(parts, component, '/')) {
    std::vector<fs::path> next;
    for (const auto& dir : candidates)
      for (auto& entry : matching_entries(dir, component)) next.push_back(std::move(entry));
    candidates = std::move(next);
  }
  if (name.back() != '/') return !candidates.empty();
  return std::any_of(candidates.begin(), candidates.end(),
                     [](const fs::path& p) { return fs::is_directory(p); });
}

// Every repository path named in a code span of `text` (outside ``` fences)
// that does not exist: each word of the span that looks like a path and
// starts with a folder of the repository (`examples/cnn.ini`, also in
// `--config examples/cnn.ini`). Other paths (`logs/log_async`,
// `DIR/model.ckpt`, `bin/downpour` under an install prefix) are not ours.
std::vector<std::string> missing_source_paths(const std::string& text) {
  static const std::set<std::string> folders = repository_folders();
  static const std::regex span("`([^`]+)`");
  static const std::regex path_shape("[A-Za-z0-9_.][A-Za-z0-9_.*@-]*(/[A-Za-z0-9_.*@-]+)*/?");
  std::vector<std::string> missing;
  for (const auto& line : unfenced_lines(text)) {
    for (std::sregex_iterator it(line.begin(), line.end(), span), end; it != end; ++it) {
      std::istringstream words((*it)[1].str());
      std::string word;
      while (words >> word) {
        word.erase(0, word.find_first_not_of("([\"'"));
        word.erase(word.find_last_not_of(")],;:\"'") + 1);
        const auto slash = word.find('/');
        if (slash == std::string::npos || !std::regex_match(word, path_shape) ||
            folders.count(word.substr(0, slash)) == 0)
          continue;
        if (!path_exists(word)) missing.push_back(word);
      }
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

TEST_CASE("every folder of the README's source map exists, and every folder of the repository is in it") {
  const auto folders = source_map_folders(read_page(source_dir / "README.md"));
  CHECK(folders.size() >= 8);
  const auto missing = missing_folders(folders, source_dir);
  CHECK_MESSAGE(missing.empty(), "the source map names missing folders: " << joined(missing));
  const auto unmapped = unmapped_folders(folders);
  CHECK_MESSAGE(unmapped.empty(), "folders missing from the source map: " << joined(unmapped));
}

TEST_CASE("the source map check names a planted folder that does not exist") {
  const std::string readme =
      "# X\n## Source map\n| folder | holds |\n| --- | --- |\n| `docs/` | pages |\n"
      "| `no-such-folder/` | nothing |\n## Next\n| `also-not/` | outside the map |\n";
  const auto folders = source_map_folders(readme);
  CHECK(folders == std::vector<std::string>{"docs", "no-such-folder"});
  CHECK(missing_folders(folders, source_dir) == std::vector<std::string>{"no-such-folder"});
  const auto unmapped = unmapped_folders(folders);
  CHECK(std::count(unmapped.begin(), unmapped.end(), "protocol") == 1);
  CHECK(std::count(unmapped.begin(), unmapped.end(), "runtime/net") == 1);
  CHECK(std::count(unmapped.begin(), unmapped.end(), "runtime") == 0);
  CHECK(std::count(unmapped.begin(), unmapped.end(), "docs") == 0);
}

TEST_CASE("every source path named in the README and docs/ exists") {
  const auto pages = doc_pages();
  for (const auto& page : pages) {
    const auto missing = missing_source_paths(read_page(page));
    CHECK_MESSAGE(missing.empty(), page.string() << ": names missing paths: " << joined(missing));
  }
}

TEST_CASE("the source path check names planted files, folders and globs that do not exist") {
  const std::string page =
      "`test/unit/test_readme.cpp`, `fuzz/*.supp`, `docs/` and `config/`; `test/*/test_*.cpp`,\n"
      "`reporting/log.*` and `--config examples/cnn.ini` (`protocol/messages.hpp`);\n"
      "`test/no_such_test.cpp`, `runtime/no_such_guard.*`, `DIR/model.ckpt`, `logs/log_async`\n"
      "`docs/options.md/` `protocol/no_such/` `scripts/chaos --binary actors/no_such.hpp`\n"
      "`test/*/test_no_such_*.cpp`\n```\n`actors/in_a_fence.hpp`\n```\n";
  CHECK(missing_source_paths(page) ==
        std::vector<std::string>{"test/no_such_test.cpp", "runtime/no_such_guard.*",
                                 "docs/options.md/", "protocol/no_such/", "actors/no_such.hpp",
                                 "test/*/test_no_such_*.cpp"});
}

TEST_CASE("the README's documentation table links every page of docs/") {
  const auto readme = read_page(source_dir / "README.md");
  const auto begin = readme.find("\n## Documentation\n");
  REQUIRE(begin != std::string::npos);
  const auto table = readme.substr(begin);
  std::vector<std::string> unlisted;
  for (const auto& entry : fs::directory_iterator(source_dir / "docs")) {
    const auto name = "docs/" + entry.path().filename().string();
    if (entry.path().extension() == ".md" && table.find("(" + name + ")") == std::string::npos)
      unlisted.push_back(name);
  }
  CHECK_MESSAGE(unlisted.empty(), "pages missing from the README's table: " << joined(unlisted));
}

}  // namespace test_readme
