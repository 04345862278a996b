// The one log format: UTC time with milliseconds, node, level, text; level
// filtering and escaping (test_log_streams: where a node's lines go).
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "reporting/log.hpp"
#include "log_lines.hpp"
#include "runtime/net/connect.hpp"
#include "runtime/net/ports.hpp"
#include "runtime/node/job.hpp"
#include "subprocess.hpp"

namespace test_log {

using namespace downpour;
using namespace downpour::testing;
using downpour::testing::process;
using downpour::testing::temp_dir;
using namespace std::chrono_literals;

namespace {


// Seconds since the epoch of a record's time stamp (UTC, without the libc's zone).
long long epoch_seconds(const log_record& r) {
  std::tm t{};
  REQUIRE(std::sscanf(r.time.c_str(), "%d-%d-%dT%d:%d:%d", &t.tm_year, &t.tm_mon, &t.tm_mday,
                      &t.tm_hour, &t.tm_min, &t.tm_sec) == 6);
  t.tm_year -= 1900;
  t.tm_mon -= 1;
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

TEST_CASE("the one log reader takes apart every line the logger writes, and nothing else") {
  auto got = capture("worker:3", log_level::debug, [](const logger& log) {
    one_of_each(log);
    log.info(step_log_line(120, 60, 0.53f));
    run_summary s;
    s.global_step = 20000;
    s.ema_test_accuracy = 0.8623;
    s.test_accuracy = 0.8581;
    s.updates_applied = 20400;
    s.updates_lost = 400;
    s.failover_pause_s = 1.5;
    log.info(final_line(s));
    log.info("checkpoint: saved /tmp/x/model.ckpt-1000 (shards answered in 1.2 ms, written in "
             "3.4 ms)");
    log.info("checkpoint: restored /tmp/x/model.ckpt-1000 at global step 1000");
    log.info("stop_supervisor: every shard restored; training resumes at global step 1000 "
             "(rolled back from global step 1400)");
    log.info("parameter_shard 0: restored to global step 1000 (rolled back from global step 1402)");
    log.info("stop_supervisor: failed over to the backups; training resumes at global step 1403");
  });
  const auto records = parse_log(got.out + "stray output of a child\n" + got.err);
  REQUIRE(records.size() == 11);
  CHECK(records[0].node == "worker:3");
  CHECK(records[0].level == log_level::info);
  CHECK(records[0].message == "i");
  CHECK(records[1].level == log_level::debug);
  CHECK(records[9].level == log_level::error);
  CHECK(records[9].message == "e");
  CHECK(records[10].level == log_level::warn);
  CHECK(records[0].time.size() == std::string("2026-11-30T03:43:13.123Z").size());
  REQUIRE(progress_of(records[2]));
  CHECK(progress_of(records[2])->global_step == 120);
  CHECK(progress_of(records[2])->step == 60);
  CHECK(progress_lines(got.out) == 1);
  CHECK(newest_progress_step(got.out) == 120);
  REQUIRE(final_of(got.out));
  CHECK(final_of(got.out)->global_step == 20000);
  CHECK(final_of(got.out)->ema_test_accuracy == doctest::Approx(0.8623));
  CHECK(newest_saved_step(got.out) == 1000);
  CHECK(restored_step(got.out) == 1000);
  CHECK(final_of(got.out)->updates_applied == 20400);
  CHECK(final_of(got.out)->updates_lost == 400);
  CHECK(final_of(got.out)->failover_pause_s == doctest::Approx(1.5));
  REQUIRE(rollback_lines(got.out).size() == 3);
  CHECK(rollback_lines(got.out)[0].restored == 1000);
  CHECK(rollback_lines(got.out)[0].reached == 1400);
  CHECK(rollback_lines(got.out)[1].reached == 1402);
  CHECK(rollback_lines(got.out)[2].restored == 1403);  // a failover rolls nothing back
  CHECK(rollback_lines(got.out)[2].reached == 1403);
  // A line cut short, or text that only looks like one, is no record.
  CHECK_FALSE(parse_log_line("2026-11-30T03:43:13.123Z worker:1"));
  CHECK_FALSE(parse_log_line("global_step:120,step:60,loss:0.53"));
  CHECK_FALSE(parse_log_line("2026-11-30 03:43:13 worker:1 INFO x"));
}

TEST_CASE("--log-format=json writes one object per line with the text format's fields, and the "
          "one reader takes both") {
  std::chrono::system_clock::time_point t{std::chrono::milliseconds(1796010193123LL)};
  CHECK(format_json_log_line(t, "worker:1", log_level::info, "global_step:120,step:60,loss:0.53") ==
        R"({"time":"2026-11-30T03:43:13.123Z","node":"worker:1","level":"INFO",)"
        R"("message":"global_step:120,step:60,loss:0.53"})"
        "\n");
  const std::string raw = "a \"quoted\"\tpath\\x\x01\xe2\x80\xae" + std::string(8000, 'x');
  const auto tricky = format_json_log_line(t, "ps:0", log_level::warn, raw);
  CHECK(tricky.find('\n') == tricky.size() - 1);  // one line, whatever the message holds
  const auto back = parse_log_line(tricky);
  REQUIRE(back);
  // The text format's bounded, escaped message (printable_line), cut at 4096 bytes.
  CHECK(back->message == printable_line(raw));
  CHECK(back->message.rfind("a \"quoted\"\\x09path\\x\\x01\\u202E", 0) == 0);
  CHECK(back->message.size() == max_log_message_bytes + std::string(log_cut_mark).size());
  CHECK(back->level == log_level::warn);
  CHECK(back->node == "ps:0");
  CHECK(back->time == "2026-11-30T03:43:13.123Z");
  CHECK_FALSE(parse_log_line(R"({"time":"x","node":"ps:0","level":"LOUD","message":"m"})"));
  CHECK_FALSE(parse_log_line(R"({"time":"x","node":"ps:0"})"));
  CHECK_FALSE(parse_log_line("{not json"));

  options o;
  o.log_format = log_format_kind::json;
  std::vector<std::string> messages = {step_log_line(120, 60, 0.53f), "checkpoint: restored "
                                       "/tmp/x/model.ckpt-1000 at global step 1000"};
  for (const auto& m : messages) {
    const auto as_text = parse_log_line(format_log_line(t, "worker:3", log_level::info, m));
    const auto as_json = parse_log_line(format_json_log_line(t, "worker:3", log_level::info, m));
    REQUIRE(as_text);
    REQUIRE(as_json);
    CHECK(as_text->time == as_json->time);
    CHECK(as_text->node == as_json->node);
    CHECK(as_text->level == as_json->level);
    CHECK(as_text->message == as_json->message);
  }
  CHECK(node_logger(o, role_kind::ps, 1).node() == "ps:1");
}

TEST_CASE("a short job with --log-format=json logs only JSON lines that the log readers read") {
  temp_dir dir("logjson");
  process p({DOWNPOUR_BINARY, "--last-step=20", "--log-every=5", "--quiet",
             "--save-checkpoint-secs=0", "--log-format=json", "--checkpoint-dir=" + dir.str()},
            dir / "out.log");
  REQUIRE(p.wait(120s) == 0);
  const auto out = p.output();
  CAPTURE(out);
  std::size_t lines = 0;
  for (const auto& line : lines_of(out)) {
    CHECK(line.front() == '{');
    CHECK(parse_log_line(line));
    ++lines;
  }
  CHECK(lines == parse_log(out).size());
  CHECK(progress_lines(out) >= 2);  // two workers share the 20 steps, a line every 5 of their own
  REQUIRE(final_of(out));
  CHECK(final_of(out)->global_step == 20);
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
  const auto first = parse_log_line(lines_of(got.out).at(0));
  REQUIRE(first);
  CHECK(first->node == "worker:2");
  CHECK(first->message == "i");
  const long long at = epoch_seconds(*first);
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

TEST_CASE("control, bidirectional and stray bytes are escaped, so a message is one line as written") {
  // NUL, ESC, newline, tab, DEL, a C1 control (U+0085), RIGHT-TO-LEFT OVERRIDE,
  // LEFT-TO-RIGHT ISOLATE, a line separator, a stray byte; é and CJK stay.
  const std::string hostile = std::string("a\0b\x1b[31mc\nERROR forged\td\x7f", 25) +
                              "\xc2\x85" + "\xe2\x80\xae" + "rtl\xe2\x81\xa6" + "\xe2\x80\xa8" +
                              "\xff" + "\xc3\xa9\xe4\xb8\xad";
  auto got = capture("ps:0", log_level::info, [&](const logger& log) { log.info(hostile); });
  const auto records = parse_log(got.out);
  REQUIRE(records.size() == 1);
  CHECK(records[0].message ==
        "a\\x00b\\x1B[31mc\\x0AERROR forged\\x09d\\x7F\\u0085\\u202Ertl\\u2066\\u2028\\xFF"
        "\xc3\xa9\xe4\xb8\xad");
  CHECK(lines_of(got.out).size() == 1);
  // Every escaped character, one by one: U+202A..U+202E, U+2066..U+2069.
  for (const char* bidi : {"\xe2\x80\xaa", "\xe2\x80\xab", "\xe2\x80\xac", "\xe2\x80\xad",
                           "\xe2\x81\xa6", "\xe2\x81\xa7", "\xe2\x81\xa8", "\xe2\x81\xa9"}) {
    CAPTURE(bidi);
    CHECK(printable_line(bidi).rfind("\\u20", 0) == 0);
  }
  // An overlong form of '/' and a lone surrogate are no characters: each byte escaped.
  CHECK(printable_line("\xc0\xaf") == "\\xC0\\xAF");
  CHECK(printable_line("\xed\xa0\x80") == "\\xED\\xA0\\x80");
}

TEST_CASE("a log line is cut at 4096 bytes of message, marked, and never inside an escape") {
  auto got = capture("worker:1", log_level::info, [](const logger& log) {
    log.error(std::string(100 * 1000 * 1000, 'x'));  // a 100 MB bad token, echoed
    log.info(std::string(max_log_message_bytes, 'y'));
    log.info(std::string(max_log_message_bytes - 2, 'z') + '\x01');
    log_stream s{log, log_level::info};
    s << std::string(1 << 20, 'w') << "\nshort\n";
  });
  const auto records = parse_log(got.out + got.err);
  REQUIRE(records.size() == 5);
  CHECK(records[0].message == std::string(max_log_message_bytes, 'y'));
  CHECK(records[1].message == std::string(max_log_message_bytes - 2, 'z') + log_cut_mark);
  CHECK(records[2].message == std::string(max_log_message_bytes, 'w') + log_cut_mark);
  CHECK(records[3].message == "short");
  CHECK(records[4].level == log_level::error);
  CHECK(records[4].message == std::string(max_log_message_bytes, 'x') + log_cut_mark);
  CHECK(got.err.size() < max_log_message_bytes + 100);
}

}  // namespace test_log
