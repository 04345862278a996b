// Where a node's log lines go as a process: the levels on stdout and stderr,
// a failure's one ERROR line, a bad --log-level, a damaged checkpoint's WARN.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "reporting/log.hpp"
#include "log_lines.hpp"
#include "runtime/net/connect.hpp"
#include "runtime/net/ports.hpp"
#include "runtime/node/job.hpp"
#include "subprocess.hpp"

namespace test_log_streams {

using namespace downpour;
using namespace downpour::testing;
using namespace std::chrono_literals;

TEST_CASE("a bad --log-level is a one-line error naming the value and the choices, exit 2") {
  temp_dir dir("loglevel");
  process p({DOWNPOUR_BINARY, "--log-level=loud"}, dir / "p.log");
  CHECK(p.wait(30s) == 2);
  CHECK(p.output() ==
        "downpour: config: --log-level=loud is not valid (expected error|warn|info|debug)\n");
}

TEST_CASE("a node's failure is an ERROR line of that node on stderr, nothing on stdout") {
  temp_dir dir("logerr");
  const port_reservation ports(2);
  auto r = run_split({DOWNPOUR_BINARY, "--role=worker", "--task=1",
                      "--ps-hosts=127.0.0.1:" + std::to_string(ports[0]),
                      "--worker-hosts=127.0.0.1:" + std::to_string(ports[1]) + ",127.0.0.1:1",
                      "--connect-timeout=0.2", "--checkpoint-dir=" + dir / "ckpt"},
                     dir, "fail");
  CHECK(r.code == 1);
  CHECK(r.out.empty());
  auto lines = lines_of(r.err);
  REQUIRE(lines.size() == 1);
  const auto line = parse_log_line(lines[0]);
  REQUIRE(line);
  CHECK(line->node == "worker:1");
  CHECK(line->level == log_level::error);
  CHECK(line->message.rfind("cannot reach ps 0 at 127.0.0.1:", 0) == 0);
}

TEST_CASE("a short job logs INFO lines on stdout, DEBUG lines only at debug, nothing below warn") {
  temp_dir dir("logjob");
  std::vector<std::string> job = {DOWNPOUR_BINARY, "--last-step=20", "--log-every=5",
                                  "--quiet", "--save-checkpoint-secs=0", "--transport=tcp",
                                  "--ps-hosts=127.0.0.1:0,127.0.0.1:0",
                                  "--worker-hosts=127.0.0.1:0"};
  auto with = [&](const std::string& level, const std::string& sub) {
    auto args = job;
    args.push_back("--log-level=" + level);
    args.push_back("--checkpoint-dir=" + dir / sub);
    return run_split(args, dir, sub);
  };
  auto info = with("info", "info");
  REQUIRE(info.code == 0);
  CHECK(info.err.empty());
  std::size_t steps = 0;
  for (const auto& line : lines_of(info.out)) {
    const auto r = parse_log_line(line);
    REQUIRE_MESSAGE(r, line);
    CHECK(r->level == log_level::info);
    if (progress_of(*r)) ++steps;
  }
  CHECK(steps == 4);  // one worker, 20 steps, a line every 5
  CHECK(progress_lines(info.out) == 4);
  REQUIRE(final_of(info.out));
  CHECK(final_of(info.out)->global_step == 20);
  CHECK(info.out.find(" worker:0 INFO final: global_step=20 ") != std::string::npos);
  CHECK(info.out.find(" ps:1 INFO listening as ps 1 on 127.0.0.1:") != std::string::npos);
  CHECK(levels_in(info.out).find("DEBUG") == std::string::npos);

  auto debug = with("debug", "debug");
  REQUIRE(debug.code == 0);
  CHECK(debug.out.find(" worker:0 DEBUG connected to ps 1 at 127.0.0.1:") != std::string::npos);

  auto warn = with("warn", "warn");
  REQUIRE(warn.code == 0);
  CHECK(warn.out.empty());
  CHECK(warn.err.empty());
}

TEST_CASE("a damaged newest checkpoint is a WARN line on stderr; the job uses the one before") {
  temp_dir dir("logwarn");
  const std::string ckpt = dir / "ckpt";
  std::vector<std::string> job = {DOWNPOUR_BINARY, "--quiet", "--save-checkpoint-secs=0",
                                  "--checkpoint-dir=" + ckpt, "--log-every=1000"};
  auto first = job;
  first.push_back("--last-step=20");
  const auto first_run = run_split(first, dir, "first");
  REQUIRE(first_run.code == 0);
  CHECK(newest_saved_step(first_run.out) == 20);
  std::filesystem::resize_file(ckpt + "/model.ckpt-20", 100);
  auto second = job;
  second.push_back("--last-step=40");
  auto r = run_split(second, dir, "second");
  CHECK(r.code == 0);
  auto warnings = lines_of(r.err);
  REQUIRE(warnings.size() == 1);
  const auto w = parse_log_line(warnings[0]);
  REQUIRE(w);
  CHECK(w->node == "worker:0");
  CHECK(w->level == log_level::warn);
  CHECK(w->message.rfind("checkpoint: " + ckpt + "/model.ckpt-20: truncated", 0) == 0);
  CHECK(w->message.find("; using model.ckpt-0") != std::string::npos);
  const std::string restored =
      " worker:0 INFO checkpoint: restored " + ckpt + "/model.ckpt-0 at global step 0\n";
  CHECK(r.out.find(restored) != std::string::npos);
  CHECK(restored_step(r.out) == 0);
  CHECK(r.out.find(" worker:0 INFO final: global_step=40 ") != std::string::npos);
}

}  // namespace test_log_streams
