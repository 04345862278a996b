// The checkpoint directory at the start of a job: a directory or a FIFO
// where a checkpoint file should be, a checkpoint grown to gigabytes, a
// directory of only damaged checkpoints (and --fresh), a checkpoint
// directory that cannot be created.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <sys/resource.h>

#include "fifo.hpp"
#include "runtime/files/checkpoint.hpp"
#include "runtime/node/node.hpp"
#include "subprocess.hpp"
#include "test_jobs.hpp"

namespace test_checkpoint_dir {

using namespace downpour;
using downpour::testing::local_job;
using downpour::testing::process;
using downpour::testing::run_local_job;
using downpour::testing::temp_dir;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> train(const temp_dir& dir, std::vector<std::string> extra) {
  std::vector<std::string> a = {DOWNPOUR_BINARY, "--quiet", "--checkpoint-dir=" + dir.str(),
                                "--save-checkpoint-secs=0"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

// Checkpoints at steps 0, 10 and 20 of a real (short) job.
void three_checkpoints(const temp_dir& dir) {
  auto o = local_job(1, 1, 20, dir.str());
  o.save_checkpoint_steps = 10;
  REQUIRE(run_local_job(o));
  REQUIRE(checkpoint_files(dir.str()).size() == 3);
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void damage(const std::string& path) {
  std::string bytes = read_bytes(path);
  bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x01);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

std::size_t lines_in(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

long peak_rss_kib() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

}  // namespace

TEST_CASE("a directory where the newest checkpoint should be is skipped like a damaged file") {
  temp_dir dir("ckpt-is-dir");
  three_checkpoints(dir);
  const std::string newest = dir / "model.ckpt-20";
  fs::remove(newest);
  fs::create_directory(newest);
  std::ostringstream warnings;
  auto found = find_newest_checkpoint(dir.str(), warnings);
  REQUIRE(found);
  CHECK(found->path == dir / "model.ckpt-10");
  CHECK(warnings.str() == "checkpoint: " + newest +
                              ": is a directory, not a regular file; using model.ckpt-10\n");

  process inspect({DOWNPOUR_BINARY, "inspect", "--checkpoint=" + newest}, dir / "inspect.log");
  CHECK(inspect.wait(30s) == 1);
  CHECK(inspect.output() ==
        "downpour: checkpoint: " + newest + ": is a directory, not a regular file\n");

  process resume(train(dir, {"--last-step=30"}), dir / "resume.log");
  CHECK(resume.wait(120s) == 0);
  const auto out = resume.output();
  CAPTURE(out);
  CHECK(out.find("is a directory, not a regular file; using model.ckpt-10") != std::string::npos);
  CHECK(out.find("checkpoint: restored " + dir / "model.ckpt-10" + " at global step 10") !=
        std::string::npos);
  CHECK(out.find("final: global_step=30 ") != std::string::npos);
}

TEST_CASE("only damaged checkpoints: the job refuses to start, naming them, unless --fresh") {
  temp_dir dir("ckpt-all-damaged");
  three_checkpoints(dir);
  const auto files = checkpoint_files(dir.str());
  for (const auto& f : files) damage(f);
  std::vector<std::string> damaged;
  for (const auto& f : files) damaged.push_back(read_bytes(f));

  process refused(train(dir, {"--last-step=30"}), dir / "refused.log");
  CHECK(refused.wait(120s) == 1);
  const auto out = refused.output();
  CAPTURE(out);
  CHECK(lines_in(out) == 1);
  CHECK(out.find("worker:0 ERROR checkpoint: every checkpoint in " + dir.str() + " is damaged (" +
                 dir / "model.ckpt-20" + ": checksum mismatch") != std::string::npos);
  for (const auto& f : files) CHECK(out.find(f + ": ") != std::string::npos);
  CHECK(out.find("give --fresh") != std::string::npos);
  for (std::size_t i = 0; i < files.size(); ++i) CHECK(read_bytes(files[i]) == damaged[i]);

  process fresh(train(dir, {"--last-step=30", "--fresh"}), dir / "fresh.log");
  CHECK(fresh.wait(120s) == 0);
  const auto fresh_out = fresh.output();
  CAPTURE(fresh_out);
  CHECK(fresh_out.find("checkpoint: --fresh: moved 5 files of the earlier run into " + dir.str() +
                       "/before-fresh-") != std::string::npos);
  std::string aside;
  for (const auto& e : fs::directory_iterator(dir.str()))
    if (e.path().filename().string().rfind("before-fresh-", 0) == 0) aside = e.path().string();
  REQUIRE(!aside.empty());
  for (std::size_t i = 0; i < files.size(); ++i)
    CHECK(read_bytes(aside + "/" + fs::path(files[i]).filename().string()) == damaged[i]);
  CHECK(fresh_out.find("checkpoint: restored") == std::string::npos);
  CHECK(fresh_out.find("final: global_step=30 ") != std::string::npos);
  CHECK(read_checkpoint(dir / "model.ckpt-30").global_step == 30);
}

TEST_CASE("a checkpoint directory that cannot be created is one line naming it, exit 1") {
  temp_dir dir("ckpt-uncreatable");
  std::ofstream(dir / "file") << "not a directory";
  const std::string bad = dir / "file/sub";
  process p({DOWNPOUR_BINARY, "--quiet", "--last-step=10", "--checkpoint-dir=" + bad},
            dir / "p.log");
  CHECK(p.wait(60s) == 1);
  const auto out = p.output();
  CAPTURE(out);
  CHECK(lines_in(out) == 1);
  CHECK(out.find("worker:0 ERROR checkpoint: cannot create the checkpoint directory " + bad +
                 " (Not a directory); choose another --checkpoint-dir") != std::string::npos);
}

TEST_CASE("a checkpoint grown to 4 or 50 GiB with a valid header is skipped unread, the older one used") {
  temp_dir dir("ckpt-grown");
  three_checkpoints(dir);
  const std::string newest = dir / "model.ckpt-20";
  const auto real_size = fs::file_size(newest);
  for (const std::uintmax_t gib : {4, 50}) {
    CAPTURE(gib);
    // Sparse: the header stays valid, the file claims gigabytes it never stored.
    fs::resize_file(newest, gib << 30);
    const long rss_before = peak_rss_kib();
    std::ostringstream warnings;
    auto found = find_newest_checkpoint(dir.str(), warnings);
    REQUIRE(found);
    CHECK(found->path == dir / "model.ckpt-10");
    CHECK(warnings.str() == "checkpoint: " + newest + ": " +
                                std::to_string((gib << 30) - real_size) +
                                " unexpected bytes after the payload; using model.ckpt-10\n");
    // Read whole, the file took its size in memory (4.26 GB RSS; a bare
    // std::bad_alloc at 50 GiB).
    CHECK(peak_rss_kib() - rss_before < 64 * 1024);
  }
  process inspect({DOWNPOUR_BINARY, "inspect", "--checkpoint=" + newest}, dir / "inspect.log");
  CHECK(inspect.wait(30s) == 1);
  CHECK(inspect.output() == "downpour: checkpoint: " + newest + ": " +
                                std::to_string((std::uintmax_t{50} << 30) - real_size) +
                                " unexpected bytes after the payload\n");
  process resume(train(dir, {"--last-step=30"}), dir / "resume.log");
  CHECK(resume.wait(120s) == 0);
  const auto out = resume.output();
  CAPTURE(out);
  CHECK(out.find("unexpected bytes after the payload; using model.ckpt-10") != std::string::npos);
  CHECK(out.find("checkpoint: restored " + dir / "model.ckpt-10" + " at global step 10") !=
        std::string::npos);
  CHECK(out.find("final: global_step=30 ") != std::string::npos);
  CHECK(resume.peak_rss_kb() < 1024 * 1024);
}

TEST_CASE("a FIFO where a checkpoint or the index should be is skipped without waiting on it") {
  temp_dir dir("ckpt-fifo");
  three_checkpoints(dir);
  const std::string newest = dir / "model.ckpt-20";
  fs::remove(newest);
  testing::make_fifo(newest);
  auto found_path = [&] {
    std::ostringstream warnings;
    auto found = find_newest_checkpoint(dir.str(), warnings);
    return (found ? found->path : std::string("none")) + " | " + warnings.str();
  };
  CHECK(testing::without_blocking(newest, found_path) ==
        dir / "model.ckpt-10" + " | checkpoint: " + newest +
            ": is a FIFO, not a regular file; using model.ckpt-10\n");
  fs::remove(newest);
  const std::string index = dir / "checkpoint";
  fs::remove(index);
  testing::make_fifo(index);
  CHECK(testing::without_blocking(index, found_path) ==
        dir / "model.ckpt-10" + " | checkpoint: " + index +
            ": is a FIFO, not a regular file; scanning the model.ckpt-* files\n");
  fs::remove(index);
  testing::make_fifo(newest);
  process inspect({DOWNPOUR_BINARY, "inspect", "--checkpoint=" + newest}, dir / "inspect.log");
  CHECK(inspect.wait(30s) == 1);
  CHECK(inspect.output() == "downpour: checkpoint: " + newest + ": is a FIFO, not a regular file\n");
}

}  // namespace test_checkpoint_dir
