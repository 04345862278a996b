#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "model/init.hpp"
#include "model/mlp_spec.hpp"
#include "runtime/files/checkpoint.hpp"
#include "subprocess.hpp"

namespace test_checkpoint {

using namespace downpour;
using downpour::testing::temp_dir;
namespace fs = std::filesystem;

namespace {

float float_from_bits(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Real initial weights, with the values a careless float writer would change.
checkpoint sample(std::int64_t step, const model_layout& layout = mlp_spec{}.layout("mlp")) {
  checkpoint c;
  c.layout = layout;
  c.global_step = step;
  c.mode = "sync";
  c.wall_time = 1718000000.125 + static_cast<double>(step);
  c.params = initial_parameters(layout, 7);
  c.ema = initial_parameters(layout, 8);
  c.params[0] = float_from_bits(0x7fc12345);  // quiet NaN with a payload
  c.params[1] = std::numeric_limits<float>::infinity();
  c.params[2] = -std::numeric_limits<float>::infinity();
  c.params[3] = -0.0f;
  c.params[4] = std::numeric_limits<float>::denorm_min();
  c.params[5] = static_cast<float>(step);
  c.ema.back() = float_from_bits(0xffc00001);  // negative NaN
  return c;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

std::vector<std::string> dir_names(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string error_of(const std::string& path) {
  try {
    read_checkpoint(path);
  } catch (const checkpoint_error& e) {
    return e.what();
  }
  return "";
}

std::string index_of(const std::vector<int>& steps) {
  std::string text = "model_checkpoint_path: \"model.ckpt-" + std::to_string(steps.back()) + "\"\n";
  for (int s : steps)
    text += "all_model_checkpoint_paths: \"model.ckpt-" + std::to_string(s) + "\"\n";
  return text;
}

// A pid that certainly belongs to no process any more.
pid_t dead_pid() {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

}  // namespace

TEST_CASE("a saved checkpoint reads back bit for bit, NaN payloads, infinities and -0 included") {
  temp_dir dir("ckpt-roundtrip");
  checkpoint c = sample(1200);
  std::string path = save_checkpoint(dir.str(), c, 5);
  CHECK(path == dir / "model.ckpt-1200");
  CHECK(read_text(path).substr(0, 13) == "DOWNPOUR-CKPT");
  checkpoint back = read_checkpoint(path);
  CHECK(back.layout == mlp_spec{}.layout("mlp"));
  CHECK(back.global_step == 1200);
  CHECK(back.mode == "sync");
  CHECK(back.wall_time == c.wall_time);
  CHECK(same_bits(back.params, c.params));
  CHECK(same_bits(back.ema, c.ema));
  CHECK(read_text(dir / "checkpoint") == index_of({1200}));
}

TEST_CASE("a streamed job's read positions come back from its checkpoint, and inspect counts them") {
  temp_dir dir("ckpt-positions");
  checkpoint c = sample(300);
  c.positions = {{0, {7, 1, 3, 4096, 12, 900, 40}}, {2, {7, 0, 2, read_position::unit_start, 0, 850, 0}}};
  const std::string path = save_checkpoint(dir.str(), c, 5);
  const checkpoint back = read_checkpoint(path);
  CHECK(same_bits(back.params, c.params));
  REQUIRE(back.positions.size() == 2);
  CHECK(back.positions[0].at.offset == 4096);
  CHECK(back.positions[0].at.batches == 900);
  CHECK(back.positions[1].worker == 2);
  CHECK(back.positions[1].at.offset == read_position::unit_start);
  const checkpoint_info info = inspect_checkpoint(path);
  CHECK(info.format_version == rows_checkpoint_format_version);
  CHECK(info.positions == 2);
  CHECK(info.row_variables.empty());
}

TEST_CASE("inspect reports the format, the variables and a matching checksum") {
  temp_dir dir("ckpt-inspect");
  std::string path = save_checkpoint(dir.str(), sample(42), 5);
  checkpoint_info info = inspect_checkpoint(path);
  CHECK(info.format_version == dense_checkpoint_format_version);
  CHECK(info.global_step == 42);
  CHECK(info.mode == "sync");
  CHECK(info.kind == "mlp");
  CHECK(info.spec == "784-500-10");
  REQUIRE(info.variables.size() == 4);
  CHECK(info.variables[2].name == "layer2/weights");
  CHECK(info.variables[2].offset == 392500);
  CHECK(tf_shape(info.variables[1]) == std::vector<std::size_t>{500});
  CHECK(tf_shape(info.variables[2]) == std::vector<std::size_t>{500, 10});
  CHECK(info.payload_bytes > 2 * 397510 * sizeof(float));
  CHECK(info.file_bytes == fs::file_size(path));
  CHECK(info.checksum_ok());
}

TEST_CASE("keeping three checkpoints deletes older files after the index lists the kept ones") {
  temp_dir dir("ckpt-keep");
  for (int step : {100, 200, 300, 400, 500, 600}) save_checkpoint(dir.str(), sample(step), 3);
  CHECK(dir_names(dir.str()) == std::vector<std::string>{"checkpoint", "model.ckpt-400",
                                                         "model.ckpt-500", "model.ckpt-600"});
  CHECK(read_text(dir / "checkpoint") == index_of({400, 500, 600}));
  SUBCASE("saving a kept step again makes it the newest") {
    save_checkpoint(dir.str(), sample(500), 3);
    CHECK(read_text(dir / "checkpoint") == index_of({400, 600, 500}));
  }
  SUBCASE("keep 0 keeps them all") {
    save_checkpoint(dir.str(), sample(700), 0);
    CHECK(read_text(dir / "checkpoint") == index_of({400, 500, 600, 700}));
  }
}

TEST_CASE("a flipped byte anywhere is caught and loading falls back to the previous checkpoint") {
  temp_dir dir("ckpt-flip");
  for (int step : {100, 200, 300}) save_checkpoint(dir.str(), sample(step), 5);
  const std::string path = dir / "model.ckpt-300";
  const std::string good = read_text(path);
  // Every byte of the fixed header (30) and the start of the variable header, then the arrays.
  std::vector<std::size_t> positions;
  for (std::size_t i = 0; i < 80; ++i) positions.push_back(i);
  for (std::size_t i = 80; i < good.size(); i += good.size() / 37) positions.push_back(i);
  positions.push_back(good.size() - 1);
  for (std::size_t pos : positions) {
    CAPTURE(pos);
    std::string bad = good;
    bad[pos] = static_cast<char>(bad[pos] ^ 0x10);
    write_text(path, bad);
    std::string why = error_of(path);
    CHECK(why.rfind("checkpoint: " + path + ": ", 0) == 0);
    if (pos >= 30) CHECK(why.find("checksum mismatch") != std::string::npos);
    std::ostringstream warnings;
    auto loaded = find_newest_checkpoint(dir.str(), warnings);
    REQUIRE(loaded);
    CHECK(loaded->data.global_step == 200);
    CHECK(warnings.str() == why + "; using model.ckpt-200\n");
  }
  write_text(path, good);
  std::ostringstream warnings;
  CHECK(find_newest_checkpoint(dir.str(), warnings)->data.global_step == 300);
  CHECK(warnings.str().empty());
}

TEST_CASE("a truncated checkpoint is reported as truncated and the previous one is used") {
  temp_dir dir("ckpt-truncated");
  for (int step : {100, 200}) save_checkpoint(dir.str(), sample(step), 5);
  const std::string path = dir / "model.ckpt-200";
  const std::string good = read_text(path);
  for (std::size_t size : {std::size_t{0}, std::size_t{7}, std::size_t{29}, std::size_t{30},
                           std::size_t{4096}, good.size() / 2, good.size() - 1}) {
    CAPTURE(size);
    write_text(path, good.substr(0, size));
    std::string why = error_of(path);
    CHECK(why.rfind("checkpoint: " + path + ": truncated: ", 0) == 0);
    std::ostringstream warnings;
    auto found = find_newest_checkpoint(dir.str(), warnings);
    REQUIRE(found);
    CHECK(found->path == dir / "model.ckpt-100");
    CHECK(warnings.str() == why + "; using model.ckpt-100\n");
  }
  write_text(path, good + "x");
  CHECK(error_of(path) == "checkpoint: " + path + ": 1 unexpected bytes after the payload");
}

TEST_CASE("without a usable index the newest checkpoint is found by scanning the directory") {
  temp_dir dir("ckpt-scan");
  for (int step : {900, 1000, 1100}) save_checkpoint(dir.str(), sample(step), 5);
  std::ostringstream warnings;
  SUBCASE("missing index: no warning") {
    fs::remove(dir / "checkpoint");
    CHECK(find_newest_checkpoint(dir.str(), warnings)->data.global_step == 1100);
    CHECK(warnings.str().empty());
  }
  SUBCASE("malformed index: a warning naming it") {
    write_text(dir / "checkpoint", "model_checkpoint_path: \"model.ckpt-1000\"\ngarbage\n");
    CHECK(find_newest_checkpoint(dir.str(), warnings)->data.global_step == 1100);
    CHECK(warnings.str() == "checkpoint: " + dir / "checkpoint" +
                                ": malformed line 2; scanning the model.ckpt-* files\n");
  }
  SUBCASE("an index naming a deleted file: a warning, then the previous one") {
    fs::remove(dir / "model.ckpt-1100");
    CHECK(find_newest_checkpoint(dir.str(), warnings)->data.global_step == 1000);
    CHECK(warnings.str().find(dir / "model.ckpt-1100" + ": cannot open") != std::string::npos);
  }
  SUBCASE("no checkpoint at all") {
    for (int step : {900, 1000, 1100}) fs::remove(dir / ("model.ckpt-" + std::to_string(step)));
    CHECK_FALSE(find_newest_checkpoint(dir.str(), warnings));
    CHECK_FALSE(find_newest_checkpoint(dir / "never-created", warnings));
  }
}

TEST_CASE(
    "a file saved after the index was last written counts as the newest and is then indexed") {
  temp_dir dir("ckpt-orphan");
  for (int step : {100, 200}) save_checkpoint(dir.str(), sample(step), 2);
  const std::string old_index = read_text(dir / "checkpoint");
  save_checkpoint(dir.str(), sample(300), 2);
  // As if killed between renaming model.ckpt-300 and replacing the index.
  write_text(dir / "checkpoint", old_index);
  fs::copy_file(dir / "model.ckpt-300", dir / "model.ckpt-50");  // a stale one from long ago
  std::ostringstream warnings;
  CHECK(find_newest_checkpoint(dir.str(), warnings)->data.global_step == 300);
  CHECK(warnings.str().empty());
  save_checkpoint(dir.str(), sample(400), 2);
  CHECK(read_text(dir / "checkpoint") == index_of({300, 400}));
  CHECK(dir_names(dir.str()) ==
        std::vector<std::string>{"checkpoint", "model.ckpt-300", "model.ckpt-400"});
}

TEST_CASE("saving refuses arrays that do not fit the shape, an unknown mode and a negative step") {
  temp_dir dir("ckpt-bad-save");
  checkpoint c = sample(5);
  c.ema.pop_back();
  CHECK_THROWS_AS(save_checkpoint(dir.str(), c, 5), checkpoint_error);
  c = sample(5);
  c.mode = "hogwild";
  CHECK_THROWS_WITH(save_checkpoint(dir.str(), c, 5),
                    ("checkpoint: " + dir / "model.ckpt-5" + ": unknown mode 'hogwild'").c_str());
  CHECK_THROWS_AS(save_checkpoint(dir.str(), sample(-1), 5), checkpoint_error);
  CHECK(dir_names(dir.str()).empty());
}

TEST_CASE("leftover temporary files are ignored and the next save removes a dead writer's") {
  temp_dir dir("ckpt-leftover");
  save_checkpoint(dir.str(), sample(100), 5);
  const std::string dead = ".model.ckpt-200.tmp." + std::to_string(dead_pid()) + ".0badf00d";
  const std::string dead_index = ".checkpoint.tmp." + std::to_string(dead_pid()) + ".00000001";
  const std::string live = ".model.ckpt-200.tmp." + std::to_string(::getpid()) + ".12345678";
  for (const auto& name : {dead, dead_index, live})
    write_text(dir / name, read_text(dir / "model.ckpt-100").substr(0, 1000));
  std::ostringstream warnings;
  CHECK(find_newest_checkpoint(dir.str(), warnings)->data.global_step == 100);
  CHECK(warnings.str().empty());
  save_checkpoint(dir.str(), sample(300), 5);
  CHECK(dir_names(dir.str()) ==
        std::vector<std::string>{live, "checkpoint", "model.ckpt-100", "model.ckpt-300"});
}

}  // namespace test_checkpoint
