// Crash safety of checkpoint saving: for every step of a save (save_stage), in
// a directory holding 1 to 3 complete saves, a child process saves and kills
// itself with SIGKILL right after that step. Whatever it leaves must read back
// whole, the newest checkpoint must be the one that step implies, and the next
// save must clean up after it. The kill moments come from save_checkpoint's
// observer, not from timing, so every round stops at the same place anywhere.
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
#include <optional>
#include <set>
#include <sstream>

#include "model/init.hpp"
#include "model/mlp_spec.hpp"
#include "runtime/files/checkpoint.hpp"
#include "subprocess.hpp"

namespace test_checkpoint_crash {

using namespace downpour;
using downpour::testing::scaled;
using downpour::testing::temp_dir;
namespace fs = std::filesystem;

namespace {

constexpr std::size_t crash_keep = 2;
// Complete saves before the fatal one: 1 leaves nothing to prune, 2 and 3 make
// the fatal save prune one file (3: with one pruned before).
constexpr std::int64_t history_depths[] = {1, 2, 3};
constexpr std::size_t stage_count = static_cast<std::size_t>(save_stage::pruning_synced) + 1;

// A smaller hidden layer than the job's keeps the test short; the file is
// still more than one chunk (1.27 MB).
checkpoint base_checkpoint() {
  checkpoint c;
  c.layout = mlp_spec{784, {200}, 10}.layout("mlp");
  c.mode = "async";
  c.wall_time = 1718000000.0;
  c.params = initial_parameters(c.layout, 21);
  c.ema = initial_parameters(c.layout, 22);
  return c;
}

// The base with its step written into a parameter too, so a file's contents
// can be matched to its name.
checkpoint at_step(const checkpoint& base, std::int64_t step) {
  checkpoint c = base;
  c.global_step = step;
  c.params[5] = static_cast<float>(step);
  return c;
}

// A directory after `history` complete saves, steps 1 to history; each round
// starts from a copy.
std::string save_history(const std::string& dir, const checkpoint& base, std::int64_t history) {
  for (std::int64_t step = 1; step <= history; ++step)
    save_checkpoint(dir, at_step(base, step), crash_keep);
  return dir;
}

std::string copy_of(const std::string& from, const std::string& to) {
  fs::copy(from, to, fs::copy_options::recursive);
  return to;
}

// The stages of a save into dir, in order.
std::vector<save_stage> stages_of_save(const std::string& dir, const checkpoint& base,
                                       std::int64_t step) {
  std::vector<save_stage> seen;
  save_checkpoint(dir, at_step(base, step), crash_keep,
                  [&](save_stage stage) { seen.push_back(stage); });
  return seen;
}

// The child: a save that reports the stage of its observation point number
// `point` and dies there. Exits only when the save fails or ends before the point.
[[noreturn]] void save_and_die(const std::string& dir, const checkpoint& base, std::int64_t step,
                               std::size_t point, int report_fd) {
  int code = 0;
  try {
    std::size_t seen = 0;
    save_checkpoint(dir, at_step(base, step), crash_keep, [&](save_stage stage) {
      if (seen++ != point) return;
      auto byte = static_cast<unsigned char>(stage);
      if (::write(report_fd, &byte, 1) == 1) ::raise(SIGKILL);
    });
  } catch (...) {
    code = 2;
  }
  ::_exit(code);
}

// Forks a child that dies at `point`; the stage it died after, nullopt (and a
// failed check) unless it reported one and was killed by SIGKILL.
std::optional<save_stage> crash_at(const std::string& dir, const checkpoint& base,
                                   std::int64_t step, std::size_t point) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::close(fds[0]);
    save_and_die(dir, base, step, point, fds[1]);
  }
  ::close(fds[1]);
  // The bound only stops a hung child; an exited one closes the pipe at once.
  pollfd p{fds[0], POLLIN, 0};
  unsigned char byte = 0;
  const int bound = static_cast<int>(scaled(std::chrono::milliseconds(60000)).count());
  const bool reported = ::poll(&p, 1, bound) == 1 && ::read(fds[0], &byte, 1) == 1;
  ::close(fds[0]);
  if (!reported) ::kill(child, SIGKILL);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  const bool killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  CHECK_MESSAGE(reported, "the child reported no stage");
  CHECK_MESSAGE(killed, "child status " << status);
  if (!reported || !killed) return std::nullopt;
  return static_cast<save_stage>(byte);
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

bool has_temporary(const std::string& dir) {
  auto names = dir_names(dir);
  return std::any_of(names.begin(), names.end(), [](const std::string& name) {
    return name.find(".tmp.") != std::string::npos;
  });
}

// A kill between creating a temporary and renaming it leaves the temporary.
bool leaves_temporary(save_stage stage) {
  return stage == save_stage::file_chunk_written || stage == save_stage::file_synced ||
         stage == save_stage::index_chunk_written || stage == save_stage::index_synced;
}

// What the directory must show.
struct expected_state {
  std::int64_t newest;        // the step find_newest_checkpoint finds
  std::int64_t index_newest;  // the index's model_checkpoint_path
};

// Every file under a checkpoint name is whole; the index names only such
// files; the newest are as expected. Returns how many checkpoint files there are.
std::size_t check_directory(const std::string& dir, const checkpoint& base,
                            const expected_state& expected) {
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
  CHECK(names.front() == checkpoint_name(expected.index_newest));
  std::ostringstream warnings;
  auto newest = find_newest_checkpoint(dir, warnings);
  REQUIRE(newest);
  CHECK(newest->data.global_step == expected.newest);
  CHECK(warnings.str().empty());
  return files;
}

}  // namespace

TEST_CASE("killing a saving process after any step of a save leaves only whole checkpoints") {
  temp_dir dir("ckpt-crash");
  const checkpoint base = base_checkpoint();
  std::set<save_stage> killed_after;
  std::size_t rounds = 0;
  for (std::int64_t history : history_depths) {
    CAPTURE(history);
    const auto before = save_history(dir / ("history-" + std::to_string(history)), base, history);
    const auto stages = stages_of_save(copy_of(before, dir / ("count-" + std::to_string(history))),
                                       base, history + 1);
    MESSAGE("a save after " << history << " has " << stages.size() << " observation points");
    // The checkpoint file is several chunks, so kills also fall between two writes of it.
    CHECK(std::count(stages.begin(), stages.end(), save_stage::file_chunk_written) >= 2);
    for (std::size_t point = 0; point < stages.size(); ++point, ++rounds) {
      CAPTURE(point);
      const auto round_dir = copy_of(before, dir / ("round-" + std::to_string(rounds)));
      auto stage = crash_at(round_dir, base, history + 1, point);
      REQUIRE(stage);
      CHECK(*stage == stages[point]);
      killed_after.insert(*stage);
      CHECK(has_temporary(round_dir) == leaves_temporary(*stage));
      // The fatal save is the newest once its file has its name, and indexed
      // once the index has been renamed.
      check_directory(round_dir, base,
                      {*stage >= save_stage::file_renamed ? history + 1 : history,
                       *stage >= save_stage::index_renamed ? history + 1 : history});
      // The child is dead: the next save removes its temporaries and prunes.
      save_checkpoint(round_dir, at_step(base, history + 2), crash_keep);
      CHECK(check_directory(round_dir, base, {history + 2, history + 2}) == crash_keep);
      CHECK_FALSE(has_temporary(round_dir));
    }
  }
  MESSAGE(rounds << " kills");
  CHECK(killed_after.size() == stage_count);  // every stage was a kill moment
}

}  // namespace test_checkpoint_crash
