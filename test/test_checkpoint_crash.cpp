// Crash safety of checkpoint saving: a child process saves in a loop and is
// killed with SIGKILL at moments spread over one save; whatever it leaves must
// read back whole.
#include <doctest/doctest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "model/init.hpp"
#include "runtime/checkpoint.hpp"
#include "subprocess.hpp"

using namespace downpour;
using downpour::testing::scaled;
using downpour::testing::temp_dir;
namespace fs = std::filesystem;

namespace {

constexpr std::size_t crash_keep = 3;

checkpoint base_checkpoint() {
  checkpoint c;
  c.mode = "async";
  c.wall_time = 1718000000.0;
  c.params = initial_parameters(c.shape, 21);
  c.ema = initial_parameters(c.shape, 22);
  return c;
}

std::vector<std::string> dir_names(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The child of the crash test: saves forever, reporting each finished save.
[[noreturn]] void save_until_killed(const std::string& dir, const checkpoint& base,
                                    std::int64_t step, int report_fd) {
  checkpoint c = base;
  for (int i = 0; i < 10000; ++i, ++step) {
    c.global_step = step;
    c.params[5] = static_cast<float>(step);
    save_checkpoint(dir, c, crash_keep);
    if (::write(report_fd, &step, sizeof step) != sizeof step) break;
  }
  ::_exit(0);
}

// Every file under a checkpoint name is whole; the index names only such files.
void check_directory(const std::string& dir, const checkpoint& base, std::int64_t acknowledged) {
  std::size_t files = 0;
  for (const auto& name : dir_names(dir)) {
    if (name.rfind("model.ckpt-", 0) != 0) continue;
    ++files;
    CAPTURE(name);
    checkpoint c;
    REQUIRE_NOTHROW(c = read_checkpoint(dir + "/" + name));
    CHECK(name == checkpoint_name(c.global_step));
    CHECK(c.params[5] == static_cast<float>(c.global_step));
    CHECK(std::memcmp(c.ema.data(), base.ema.data(), c.ema.size() * sizeof(float)) == 0);
  }
  CHECK(files <= crash_keep + 1);  // at most one not yet indexed or not yet pruned
  std::istringstream index(read_text(dir + "/checkpoint"));
  std::string line;
  std::vector<std::string> names;
  while (std::getline(index, line)) {
    auto name = line.substr(line.find('"') + 1);
    name.pop_back();
    CHECK(fs::exists(dir + "/" + name));
    names.push_back(name);
  }
  REQUIRE(names.size() >= 2);
  CHECK(names.front() == names.back());  // model_checkpoint_path is the newest listed
  std::ostringstream warnings;
  auto newest = load_newest_checkpoint(dir, warnings);
  REQUIRE(newest);
  CHECK(newest->global_step >= acknowledged);  // a save that returned survives
  CHECK(warnings.str().empty());
}

bool read_step(int fd, std::int64_t& step, std::chrono::milliseconds timeout) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(timeout.count())) != 1) return false;
  return ::read(fd, &step, sizeof step) == sizeof step;
}

}  // namespace

TEST_CASE(
    "killing a saving process at any moment leaves only whole checkpoints and a valid index") {
  temp_dir dir("ckpt-crash");
  const checkpoint base = base_checkpoint();
  // Kill moments are spread over one save's duration: write, fsync, rename, index, prune.
  auto t0 = std::chrono::steady_clock::now();
  save_checkpoint(dir / "timing", base, 1);
  const auto save_time = std::chrono::steady_clock::now() - t0;
  MESSAGE("one save takes " << std::chrono::duration<double, std::milli>(save_time).count()
                            << " ms");
  std::int64_t acknowledged = 0;
  for (int round = 0; round < 30; ++round) {
    CAPTURE(round);
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    pid_t child = ::fork();
    if (child == 0) {
      ::close(fds[0]);
      save_until_killed(dir.str(), base, acknowledged + 1, fds[1]);
    }
    ::close(fds[1]);
    std::int64_t step = 0;
    for (int saves = 0; saves < 1 + round % 3; ++saves) {
      REQUIRE(read_step(fds[0], step, scaled(std::chrono::milliseconds(60000))));
      acknowledged = step;
    }
    std::this_thread::sleep_for(save_time * (round % 10) / 10 + save_time * (round / 10) / 30);
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    CHECK(WIFSIGNALED(status));
    while (read_step(fds[0], step, std::chrono::milliseconds(0))) acknowledged = step;  // saves done before the kill
    ::close(fds[0]);
    check_directory(dir.str(), base, acknowledged);
  }
  // The children are dead: the next save removes whatever temporaries they left.
  save_checkpoint(dir.str(), base, crash_keep);
  for (const auto& name : dir_names(dir.str())) CHECK(name.find(".tmp.") == std::string::npos);
}
