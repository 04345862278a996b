// The durable write seen as system calls: a crash test kills a process, and
// the page cache survives that, so only the calls themselves show whether a
// file and its directory reach the disk. `downpour export` does one durable
// write (the .npz); strace records its calls, and the test requires, in
// order: the temporary created, fsync of that descriptor, the rename over the
// target, then the directory opened and fsync of that descriptor.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "model/init.hpp"
#include "model/mlp_spec.hpp"
#include "runtime/files/checkpoint.hpp"
#include "subprocess.hpp"

namespace test_durability {

using namespace downpour;
using downpour::testing::process;
using downpour::testing::temp_dir;
using namespace std::chrono_literals;

namespace {

// One traced call: "openat(AT_FDCWD, \"/x\", O_RDWR|O_CREAT, 0666) = 3".
struct call {
  std::string name, args;
  long result = -1;
};

std::vector<call> calls_in(const std::string& trace_path) {
  static const std::regex line(R"(^(?:\d+ +)?([a-z0-9_]+)\((.*)\) += (-?\d+).*$)");
  std::vector<call> calls;
  std::ifstream in(trace_path);
  for (std::string text; std::getline(in, text);) {
    std::smatch m;
    if (std::regex_match(text, m, line)) calls.push_back({m[1], m[2], std::stol(m[3])});
  }
  return calls;
}

// The index of the first call at or after from that matches, if any.
template <class Match>
std::optional<std::size_t> find_call(const std::vector<call>& calls, std::size_t from, Match match) {
  for (std::size_t i = from; i < calls.size(); ++i)
    if (match(calls[i])) return i;
  return std::nullopt;
}

bool is_fsync_of(const call& c, long fd) {
  return (c.name == "fsync" || c.name == "fdatasync") && c.args == std::to_string(fd) &&
         c.result == 0;
}

bool is_close_of(const call& c, long fd) { return c.name == "close" && c.args == std::to_string(fd); }

// An fsync of fd after the call at opened and before the call at before (or
// the end), with fd not closed in between (so it is still the same file).
bool synced_between(const std::vector<call>& calls, std::size_t opened, long fd,
                    std::size_t before) {
  const auto sync = find_call(calls, opened + 1, [&](const call& c) { return is_fsync_of(c, fd); });
  if (!sync || *sync >= before) return false;
  const auto closed = find_call(calls, opened + 1, [&](const call& c) { return is_close_of(c, fd); });
  return !closed || *closed > *sync;
}

}  // namespace

TEST_CASE("a durable write fsyncs the file before its rename and the directory after it") {
  REQUIRE_MESSAGE(std::filesystem::exists("/usr/bin/strace"), "strace (scripts/install-deps)");
  temp_dir dir("durability");
  checkpoint c;
  c.layout = mlp_spec{}.layout("mlp");
  c.mode = "async";
  c.params = initial_parameters(c.layout, 7);
  c.ema = c.params;
  const std::string ckpt = save_checkpoint(dir / "ckpt", c, 5);
  const std::string out_dir = dir / "out";
  std::filesystem::create_directory(out_dir);
  const std::string trace = dir / "trace.txt";
  process p({"/usr/bin/strace", "-qq", "-o", trace, "-e",
             "trace=open,openat,fsync,fdatasync,rename,renameat,renameat2,close",
             DOWNPOUR_BINARY, "export", "--checkpoint=" + ckpt, "--out=" + out_dir + "/w.npz"},
            dir / "export.log");
  REQUIRE_MESSAGE(p.wait(60s) == 0, p.output());
  const auto calls = calls_in(trace);
  REQUIRE(!calls.empty());

  const std::string temporary = out_dir + "/.w.npz.tmp.";
  const auto created = find_call(calls, 0, [&](const call& x) {
    return x.name.rfind("open", 0) == 0 && x.args.find(temporary) != std::string::npos &&
           x.args.find("O_CREAT") != std::string::npos && x.result >= 0;
  });
  REQUIRE_MESSAGE(created, "no temporary created in " << out_dir);
  const long file_fd = calls[*created].result;
  const auto renamed = find_call(calls, *created, [&](const call& x) {
    return x.name.rfind("rename", 0) == 0 && x.args.find(temporary) != std::string::npos &&
           x.args.find("\"" + out_dir + "/w.npz\"") != std::string::npos && x.result == 0;
  });
  REQUIRE_MESSAGE(renamed, "no rename of the temporary over " << out_dir << "/w.npz");
  CHECK_MESSAGE(synced_between(calls, *created, file_fd, *renamed),
                "the temporary (fd " << file_fd << ") was not fsynced before the rename");

  const auto dir_opened = find_call(calls, *renamed, [&](const call& x) {
    return x.name.rfind("open", 0) == 0 && x.args.find("\"" + out_dir + "\"") != std::string::npos &&
           x.args.find("O_DIRECTORY") != std::string::npos && x.result >= 0;
  });
  REQUIRE_MESSAGE(dir_opened, "the directory " << out_dir << " was not opened after the rename");
  CHECK_MESSAGE(synced_between(calls, *dir_opened, calls[*dir_opened].result, calls.size()),
                "the directory was not fsynced after the rename");
}

}  // namespace test_durability
