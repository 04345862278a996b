// The one durable write every result file goes through (checkpoints, .npz,
// summary.json, plots): the target holds the old bytes or the new ones, no
// temporary stays behind, and a failure names the file.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/files/durable_write.hpp"
#include "subprocess.hpp"

namespace test_durable_write {

using namespace downpour;
using downpour::testing::temp_dir;
namespace fs = std::filesystem;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  return names;
}

}  // namespace

TEST_CASE("a durable write replaces the file, creates its directory and leaves no temporary") {
  temp_dir dir("durable");
  const std::string path = dir / "sub/summary.json";
  write_durably(path, "old\n");
  write_durably(path, "new\n");
  CHECK(read_text(path) == "new\n");
  CHECK(names_in(dir / "sub") == std::vector<std::string>{"summary.json"});
}

TEST_CASE("a durable write reports each chunk, then the sync, the rename and the directory sync") {
  temp_dir dir("durable");
  std::vector<write_stage> seen;
  const std::string bytes(2 * write_chunk_bytes + 1, 'x');
  write_durably(dir / "big", bytes, [&](write_stage s) { seen.push_back(s); });
  CHECK(seen == std::vector<write_stage>{write_stage::chunk_written, write_stage::chunk_written,
                                         write_stage::chunk_written, write_stage::synced,
                                         write_stage::renamed, write_stage::directory_synced});
  CHECK(read_text(dir / "big") == bytes);
}

TEST_CASE("a write whose content fails leaves the old file and no temporary") {
  temp_dir dir("durable");
  const std::string path = dir / "plot.png";
  write_durably(path, "the old plot");
  CHECK_THROWS_WITH_AS(write_durably_from(path,
                                          [](int) { throw std::runtime_error("no PNG drawn"); }),
                       "no PNG drawn", std::runtime_error);
  CHECK(read_text(path) == "the old plot");
  CHECK(names_in(dir.str()) == std::vector<std::string>{"plot.png"});
}

TEST_CASE("a durable write that cannot create its temporary names the file and the reason") {
  temp_dir dir("durable");
  write_durably(dir / "file", "a file, not a directory");
  const std::string path = dir / "file/model.npz";
  try {
    write_durably(path, "bytes");
    FAIL("the write succeeded under a regular file");
  } catch (const durable_write_error& e) {
    const std::string what = e.what();
    CHECK(what.rfind(path + ": cannot create the temporary ", 0) == 0);
    CHECK(what.find("Not a directory") != std::string::npos);
  }
}

}  // namespace test_durable_write
