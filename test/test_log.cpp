// The one log format: UTC time with milliseconds, node, level, text; level
// filtering; errors and warnings on stderr, the rest on stdout; --log-level
// validation.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>

#include "runtime/connect.hpp"
#include "runtime/log.hpp"
#include "subprocess.hpp"

using namespace downpour;
using downpour::testing::process;
using downpour::testing::temp_dir;
using namespace std::chrono_literals;

namespace {

// time node LEVEL text, e.g. "2026-11-30T03:43:13.123Z worker:1 INFO text".
const std::regex line_format(R"((\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)\.(\d{3})Z )"
                             R"(([a-z]+:\d+) (ERROR|WARN|INFO|DEBUG) (.*))");

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Seconds since the epoch of a line's time stamp (UTC, without the libc's zone).
long long epoch_seconds(const std::smatch& m) {
  std::tm t{};
  t.tm_year = std::stoi(m[1]) - 1900;
  t.tm_mon = std::stoi(m[2]) - 1;
  t.tm_mday = std::stoi(m[3]);
  t.tm_hour = std::stoi(m[4]);
  t.tm_min = std::stoi(m[5]);
  t.tm_sec = std::stoi(m[6]);
  return static_cast<long long>(::timegm(&t));
}

// What a logger wrote to its two files.
struct captured {
  std::string out, err;
};

template <class Body>
captured capture(const std::string& node, log_level threshold, Body body) {
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  body(logger{node, threshold, out, err});
  auto read_all = [](std::FILE* f) {
    std::string text;
    std::rewind(f);
    for (int c; (c = std::fgetc(f)) != EOF;) text += static_cast<char>(c);
    std::fclose(f);
    return text;
  };
  return {read_all(out), read_all(err)};
}

void one_of_each(const logger& log) {
  log.error("e");
  log.warn("w");
  log.info("i");
  log.debug("d");
}

std::string levels_in(const std::string& text) {
  std::string levels;
  for (const auto& line : lines_of(text)) {
    std::smatch m;
    if (std::regex_match(line, m, line_format)) levels += m[9].str() + " ";
  }
  return levels;
}

// Runs the binary with stdout to the process buffer and stderr to a file.
struct split_run {
  int code;
  std::string out, err;
};

split_run run_split(const std::vector<std::string>& args, const temp_dir& dir,
                    const std::string& tag) {
  std::string command = "exec";
  for (const auto& a : args) command += " '" + a + "'";
  command += " 2>'" + dir / (tag + ".err") + "'";
  process p({"/bin/sh", "-c", command}, dir / (tag + ".out"));
  int code = p.wait(120s);
  return {code, p.output(), read_file(dir / (tag + ".err"))};
}

}  // namespace

TEST_CASE("a log line has the UTC time with milliseconds, the node, the level and the text") {
  // 2026-11-30T03:43:13.123Z
  std::chrono::system_clock::time_point t{std::chrono::milliseconds(1796010193123LL)};
  CHECK(format_log_line(t, "worker:1", log_level::info, "global_step:120,step:60,loss:0.53") ==
        "2026-11-30T03:43:13.123Z worker:1 INFO global_step:120,step:60,loss:0.53\n");
  CHECK(utc_timestamp(std::chrono::system_clock::time_point{std::chrono::milliseconds(7)}) ==
        "1970-01-01T00:00:00.007Z");
  CHECK(format_log_line(t, "ps:0", log_level::warn, "x") ==
        "2026-11-30T03:43:13.123Z ps:0 WARN x\n");
}

TEST_CASE("nodes are named role:task and a local job's chief is worker:0") {
  CHECK(node_name(role_kind::worker, 1) == "worker:1");
  CHECK(node_name(role_kind::ps, 0) == "ps:0");
  CHECK(node_name(role_kind::local, 0) == "worker:0");
  options o;
  o.log_threshold = log_level::debug;
  auto log = node_logger(o, role_kind::ps, 3);
  CHECK(log.node() == "ps:3");
  CHECK(log.threshold() == log_level::debug);
}

TEST_CASE("a logged line carries the current time and goes to stdout or stderr by level") {
  const auto before = std::chrono::system_clock::now();
  auto got = capture("worker:2", log_level::debug, one_of_each);
  const auto after = std::chrono::system_clock::now();
  CHECK(levels_in(got.out) == "INFO DEBUG ");
  CHECK(levels_in(got.err) == "ERROR WARN ");
  std::smatch m;
  const std::string first = lines_of(got.out).at(0);
  REQUIRE(std::regex_match(first, m, line_format));
  CHECK(m[8] == "worker:2");
  CHECK(m[10] == "i");
  const long long at = epoch_seconds(m);
  CHECK(at >= std::chrono::system_clock::to_time_t(before));
  CHECK(at <= std::chrono::system_clock::to_time_t(after));
}

TEST_CASE("lines below the threshold are dropped") {
  CHECK(levels_in(capture("ps:0", log_level::info, one_of_each).out) == "INFO ");
  CHECK(levels_in(capture("ps:0", log_level::info, one_of_each).err) == "ERROR WARN ");
  CHECK(levels_in(capture("ps:0", log_level::warn, one_of_each).out) == "");
  CHECK(levels_in(capture("ps:0", log_level::warn, one_of_each).err) == "ERROR WARN ");
  CHECK(levels_in(capture("ps:0", log_level::error, one_of_each).err) == "ERROR ");
  auto quiet = capture("ps:0", log_level::error, [](const logger& log) {
    CHECK_FALSE(log.enabled(log_level::warn));
    CHECK(log.enabled(log_level::error));
  });
  CHECK(quiet.out.empty());
}

TEST_CASE("a log stream turns every line written to it into one log line") {
  auto got = capture("reference:0", log_level::info, [](const logger& log) {
    log_stream s{log, log_level::warn};
    s << "checkpoint: one\ncheckpoint: " << 2 << '\n' << "unterminated";
  });
  auto lines = lines_of(got.err);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].substr(25) == "reference:0 WARN checkpoint: one");
  CHECK(lines[1].substr(25) == "reference:0 WARN checkpoint: 2");
  CHECK(lines[2].substr(25) == "reference:0 WARN unterminated");
  CHECK(got.out.empty());
}

TEST_CASE("a bad --log-level is a one-line error naming the value and the choices, exit 2") {
  temp_dir dir("loglevel");
  process p({DOWNPOUR_BINARY, "--log-level=loud"}, dir / "p.log");
  CHECK(p.wait(30s) == 2);
  CHECK(p.output() ==
        "downpour: config: --log-level=loud is not valid (expected error|warn|info|debug)\n");
}

TEST_CASE("a node's failure is an ERROR line of that node on stderr, nothing on stdout") {
  temp_dir dir("logerr");
  auto ports = pick_free_ports(2);
  auto r = run_split({DOWNPOUR_BINARY, "--role=worker", "--task=1",
                      "--ps-hosts=127.0.0.1:" + std::to_string(ports[0]),
                      "--worker-hosts=127.0.0.1:" + std::to_string(ports[1]) + ",127.0.0.1:1",
                      "--connect-timeout=0.2", "--checkpoint-dir=" + dir / "ckpt"},
                     dir, "fail");
  CHECK(r.code == 1);
  CHECK(r.out.empty());
  auto lines = lines_of(r.err);
  REQUIRE(lines.size() == 1);
  std::smatch m;
  REQUIRE(std::regex_match(lines[0], m, line_format));
  CHECK(m[8] == "worker:1");
  CHECK(m[9] == "ERROR");
  CHECK(m[10].str().rfind("cannot reach ps 0 at 127.0.0.1:", 0) == 0);
}

TEST_CASE("a short job logs INFO lines on stdout, DEBUG lines only at debug, nothing below warn") {
  temp_dir dir("logjob");
  std::vector<std::string> job = {DOWNPOUR_BINARY, "--last-step=20", "--log-every=5",
                                  "--quiet", "--save-checkpoint-secs=0", "--transport=tcp",
                                  "--ps-hosts=127.0.0.1:1,127.0.0.1:2",
                                  "--worker-hosts=127.0.0.1:3"};
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
    std::smatch m;
    REQUIRE_MESSAGE(std::regex_match(line, m, line_format), line);
    CHECK(m[9] == "INFO");
    if (std::regex_match(m[10].str(), std::regex(R"(global_step:\d+,step:\d+,loss:[0-9.e+-]+)")))
      ++steps;
  }
  CHECK(steps == 4);  // one worker, 20 steps, a line every 5
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
  REQUIRE(run_split(first, dir, "first").code == 0);
  std::filesystem::resize_file(ckpt + "/model.ckpt-20", 100);
  auto second = job;
  second.push_back("--last-step=40");
  auto r = run_split(second, dir, "second");
  CHECK(r.code == 0);
  auto warnings = lines_of(r.err);
  REQUIRE(warnings.size() == 1);
  std::smatch m;
  REQUIRE(std::regex_match(warnings[0], m, line_format));
  CHECK(m[8] == "worker:0");
  CHECK(m[9] == "WARN");
  CHECK(m[10].str().rfind("checkpoint: " + ckpt + "/model.ckpt-20: truncated", 0) == 0);
  CHECK(m[10].str().find("; using model.ckpt-0") != std::string::npos);
  const std::string restored =
      " worker:0 INFO checkpoint: restored " + ckpt + "/model.ckpt-0 at global step 0\n";
  CHECK(r.out.find(restored) != std::string::npos);
  CHECK(r.out.find(" worker:0 INFO final: global_step=40 ") != std::string::npos);
}
