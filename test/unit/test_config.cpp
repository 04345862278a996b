#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "config/options.hpp"
#include "config/version.hpp"
#include "fifo.hpp"
#include "parse_options.hpp"
#include "subprocess.hpp"
#include "runtime/node/node.hpp"

namespace downpour::test_config {
namespace {

using testing::error_of;
using testing::parse;
using testing::temp_ini;

TEST_CASE("the defaults are those of the original TensorFlow job") {
  const options o = parse({});
  CHECK(o.batch_size == 100);
  CHECK(o.learning_rate == 0.01f);
  CHECK(o.lr_decay_rate == 0.99f);
  CHECK(o.lr_decay_steps == 600);
  CHECK_FALSE(o.lr_staircase);
  CHECK(o.l2 == 1e-4f);
  CHECK(o.ema_decay == 0.99f);
  CHECK(o.last_step == 20000);
  CHECK(o.role == role_kind::local);
  CHECK(o.task == 0);
  CHECK(to_string(o.ps_hosts) == "localhost:1111,localhost:1112");
  CHECK(to_string(o.worker_hosts) == "localhost:2222,localhost:2223");
  CHECK(o.mode == train_mode::async);
  CHECK_FALSE(o.quiet);
  CHECK(o.config_file.empty());
}

TEST_CASE("every option is read from the command line") {
  // clang-format off
  const options o = parse({
      "--batch-size=32", "--hidden-units", "64", "--learning-rate=0.5", "--lr-decay-rate=1",
      "--lr-decay-steps=10", "--lr-staircase", "--l2=0", "--ema-decay=0", "--last-step=7",
      "--seed=18446744073709551615", "--log-every=3", "--quiet", "--validation-size=0",
      "--data-dir=/d", "--checkpoint-dir=/c", "--role=worker", "--task=1", "--mode=sync",
      "--replicas-to-aggregate=2", "--placement=round-robin", "--transport=tcp",
      "--connect-timeout=0.5", "--scheduler-policy=stealing", "--scheduler-threads=256"});
  // clang-format on
  CHECK(o.batch_size == 32);
  CHECK(o.hidden_units == std::vector<std::size_t>{64});
  CHECK(o.learning_rate == 0.5f);
  CHECK(o.lr_decay_rate == 1.0f);
  CHECK(o.lr_decay_steps == 10);
  CHECK(o.lr_staircase);
  CHECK(o.l2 == 0.0f);
  CHECK(o.ema_decay == 0.0f);
  CHECK(o.last_step == 7);
  CHECK(o.seed == 18446744073709551615ull);
  CHECK(o.log_every == 3);
  CHECK(o.quiet);
  CHECK(o.validation_size == 0);
  CHECK(o.data_dir == "/d");
  CHECK(o.checkpoint_dir == "/c");
  CHECK(o.role == role_kind::worker);
  CHECK(o.task == 1);
  CHECK(o.mode == train_mode::sync);
  CHECK(o.replicas_to_aggregate == 2);
  CHECK(o.placement == placement_kind::round_robin);
  CHECK(o.transport == transport_kind::tcp);
  CHECK(o.connect_timeout_s == 0.5);
  CHECK(o.scheduler_policy == "stealing");
  CHECK(o.scheduler_threads == 256);
}

TEST_CASE("the command line wins over the config file") {
  temp_ini ini("downpour-wins",
               "# a comment\nbatch-size = 50\nlearning-rate=0.1\n"
               "lr-staircase = true\n[downpour]\nmode = sync\n");
  const options o = parse({"--config", ini.str(), "--batch-size=25"});
  CHECK(o.config_file == ini.str());
  CHECK(o.batch_size == 25);
  CHECK(o.learning_rate == 0.1f);
  CHECK(o.lr_staircase);
  CHECK(o.mode == train_mode::sync);
  CHECK_FALSE(parse({"--config", ini.str(), "--lr-staircase=false"}).lr_staircase);
}

TEST_CASE("--log-level takes error, warn, info or debug, from the command line or a file") {
  CHECK(parse({}).log_threshold == log_level::info);
  CHECK(parse({"--log-level=error"}).log_threshold == log_level::error);
  CHECK(parse({"--log-level=warn"}).log_threshold == log_level::warn);
  CHECK(parse({"--log-level", "debug"}).log_threshold == log_level::debug);
  temp_ini ini("downpour-log-level", "log-level = warn\n");
  CHECK(parse({"--config", ini.str()}).log_threshold == log_level::warn);
  CHECK(error_of({"--log-level=verbose"}) ==
        "config: --log-level=verbose is not valid (expected error|warn|info|debug)");
  CHECK(error_of({"--log-level=INFO"}) ==
        "config: --log-level=INFO is not valid (expected error|warn|info|debug)");
}

TEST_CASE("a TensorFlow flag on the command line wins over the canonical name in the file") {
  temp_ini ini("downpour-alias-wins", "role = ps\n");
  CHECK(parse({"--config=" + ini.str(), "--job_name=worker"}).role == role_kind::worker);
}

TEST_CASE("an unknown command-line option is an error naming it") {
  CHECK(error_of({"--batchsize=3"}) == "config: unknown option '--batchsize' (see --help)");
  // Prefixes are not guessed: a typo must not silently pick an option.
  CHECK(error_of({"--batch", "3"}) == "config: unknown option '--batch' (see --help)");
  CHECK(error_of({"-x"}) == "config: unknown option '-x' (see --help)");
}

TEST_CASE("a positional argument is an error") {
  CHECK(error_of({"--seed=1", "train"}) == "config: unexpected argument 'train' (see --help)");
}

TEST_CASE("an unknown config file key is an error naming it and the file") {
  temp_ini ini("downpour-unknown", "batchsize = 3\n");
  CHECK(error_of({"--config", ini.str()}) ==
        "config: unknown option 'batchsize' in " + ini.str() + " (see --help)");
  temp_ini section("downpour-section", "[cluster]\nmode = sync\n");
  CHECK(error_of({"--config", section.str()}) ==
        "config: unknown option 'cluster.mode' in " + section.str() + " (see --help)");
  temp_ini help("downpour-help-key", "help = true\n");
  CHECK(error_of({"--config", help.str()}) ==
        "config: unknown option 'help' in " + help.str() + " (see --help)");
}

TEST_CASE("a malformed config file line is an error quoting it") {
  temp_ini ini("downpour-malformed", "batch-size 3\n");
  CHECK(error_of({"--config", ini.str()}) ==
        "config: malformed line 'batch-size 3' in " + ini.str() + " (expected name = value)");
}

TEST_CASE("a missing config file is an error naming it") {
  CHECK(error_of({"--config", "/nonexistent/cluster.ini"}) ==
        "config: --config file '/nonexistent/cluster.ini' does not exist");
}

TEST_CASE("bad values give one line naming the option, the value and what was expected") {
  CHECK(error_of({"--batch-size=0"}) ==
        "config: --batch-size=0 is out of range (expected an integer from 1 to 4294967295)");
  CHECK(error_of({"--batch-size=abc"}) ==
        "config: --batch-size=abc is not valid (expected an integer from 1 to 4294967295)");
  CHECK(error_of({"--batch-size=-1"}) ==
        "config: --batch-size=-1 is out of range (expected an integer from 1 to 4294967295)");
  CHECK(error_of({"--batch-size=99999999999999999999"}) ==
        "config: --batch-size=99999999999999999999 is out of range (expected an integer from 1 to "
        "4294967295)");
  CHECK(error_of({"--trainers=0"}) ==
        "config: --trainers=0 is out of range (expected an integer from 1 to 64)");
  CHECK(error_of({"--mode=foo"}) == "config: --mode=foo is not valid (expected async|sync|ssp)");
  CHECK(error_of({"--role=chief"}) ==
        "config: --role=chief is not valid (expected local|ps|worker|reference)");
  CHECK(error_of({"--learning-rate=nan"}) ==
        "config: --learning-rate=nan is out of range (expected a finite number > 0)");
  CHECK(error_of({"--learning-rate=1e-50"}) ==
        "config: --learning-rate=1e-50 is out of range (expected a finite number > 0)");
  CHECK(error_of({"--lr-decay-rate=1.5"}) ==
        "config: --lr-decay-rate=1.5 is out of range (expected a number in (0, 1])");
  CHECK(error_of({"--ema-decay=1"}) ==
        "config: --ema-decay=1 is out of range (expected a number in [0, 1))");
  CHECK(error_of({"--l2=-0.1"}) ==
        "config: --l2=-0.1 is out of range (expected a finite number >= 0)");
  CHECK(error_of({"--connect-timeout=0"}) ==
        "config: --connect-timeout=0 is out of range (expected seconds > 0 and at most 1000000)");
  CHECK(error_of({"--scheduler-threads=257"}) ==
        "config: --scheduler-threads=257 is out of range (expected an integer from 0 to 256)");
  CHECK(error_of({"--scheduler-policy=fifo"}) ==
        "config: --scheduler-policy=fifo is not valid (expected sharing|stealing)");
  CHECK(error_of({"--lr-staircase=maybe"}) ==
        "config: --lr-staircase=maybe is not valid (expected true|false)");
  CHECK(error_of({"--batch-size"}) ==
        "config: --batch-size is missing its value (expected --batch-size=VALUE)");
  CHECK(error_of({"--help=1"}) == "config: --help takes no value");
}

TEST_CASE("a bad value in the config file names the file") {
  temp_ini ini("downpour-bad-value", "batch-size = 0\n");
  CHECK(error_of({"--config", ini.str()}) ==
        "config: " + ini.str() +
            ": batch-size=0 is out of range (expected an integer from 1 to 4294967295)");
}

TEST_CASE("the TensorFlow flag names are accepted") {
  const options o =
      parse({"--job_name=worker", "--task_id=1", "--ps_hosts=a:1", "--worker_hosts=b:2,c:3"});
  CHECK(o.role == role_kind::worker);
  CHECK(o.task == 1);
  CHECK(to_string(o.ps_hosts) == "a:1");
  CHECK(to_string(o.worker_hosts) == "b:2,c:3");
  CHECK(parse({"--job_name=ps", "--role=ps"}).role == role_kind::ps);
}

TEST_CASE("a TensorFlow flag and its option with different values is an error") {
  CHECK(error_of({"--job_name=ps", "--role=worker"}) ==
        "config: --role=worker conflicts with --job_name=ps (give one value)");
  CHECK(error_of({"--batch-size=1", "--batch-size=2"}) ==
        "config: --batch-size=2 conflicts with --batch-size=1 (give one value)");
  CHECK(error_of({"--job_name=local"}) ==
        "config: --job_name=local is not valid (expected ps|worker)");
}

TEST_CASE("--help prints every option and returns nothing") {
  std::ostringstream out;
  CHECK_FALSE(parse({"--batch-size=7", "--help"}, out).has_value());
  const std::string text = out.str();
  CHECK(text.rfind("Usage: downpour [COMMAND] [options]\n", 0) == 0);
  for (const char* name : {"config",
                           "data-dir",
                           "checkpoint-dir",
                           "validation-size",
                           "batch-size",
                           "hidden-units",
                           "learning-rate",
                           "lr-decay-rate",
                           "lr-decay-steps",
                           "lr-staircase",
                           "l2",
                           "ema-decay",
                           "last-step",
                           "seed",
                           "log-every",
                           "quiet",
                           "save-checkpoint-secs",
                           "save-checkpoint-steps",
                           "keep-checkpoints",
                           "checkpoint",
                           "out",
                           "ema",
                           "role",
                           "task",
                           "ps-hosts",
                           "worker-hosts",
                           "mode",
                           "replicas-to-aggregate",
                           "staleness",
                           "trainers",
                           "ticket-lease",
                           "placement",
                           "transport",
                           "connect-timeout",
                           "scheduler-policy",
                           "scheduler-threads",
                           "bind",
                           "cluster-name",
                           "heartbeat-interval",
                           "node-timeout",
                           "tls-ca",
                           "tls-cert",
                           "tls-key",
                           "tls-passphrase",
                           "eval-every",
                           "metrics",
                           "chief",
                           "help",
                           "version",
                           "job_name",
                           "task_id",
                           "ps_hosts",
                           "worker_hosts"})
    CHECK_MESSAGE(text.find("\n  --" + std::string(name) + " ") != std::string::npos, name);
  CHECK(text.find("(default: 100)") != std::string::npos);
  CHECK(text.find("(default: localhost:1111,localhost:1112)") != std::string::npos);
  CHECK(text == help_text());
}

TEST_CASE("--version prints the version and the CAF version") {
  std::ostringstream out;
  CHECK_FALSE(parse({"--version"}, out).has_value());
  CHECK(out.str() == "downpour " + std::string(build_version()) + " (CAF 0.17.6)\n");
}

// The commit of the checkout the test was built from, "" when there is none.
std::string source_commit() {
  const std::string command =
      "git -C '" DOWNPOUR_SOURCE_DIR "' rev-parse --short=12 HEAD 2>/dev/null";
  std::unique_ptr<FILE, decltype(&pclose)> pipe(popen(command.c_str(), "r"), pclose);
  char buf[64] = {};
  if (!pipe || !std::fgets(buf, sizeof buf, pipe.get())) return "";
  std::string commit = buf;
  while (!commit.empty() && std::isspace(static_cast<unsigned char>(commit.back()))) commit.pop_back();
  return commit;
}

// The versions cmake/build_version.cmake writes are checked in test_package;
// a build exactly at a release tag is named by the tag alone.
TEST_CASE("the version names the commit the build was made from") {
  const std::string version = build_version();
  const auto commit = source_commit();
  CAPTURE(version);
  if (commit.empty() || version.find_first_of("+~") == std::string::npos) {
    CHECK(std::all_of(version.begin(), version.end(),
                      [](char c) { return c == '.' || std::isdigit(static_cast<unsigned char>(c)); }));
  } else {
    CHECK(version.find("git") != std::string::npos);
    CHECK(version.find("." + commit) != std::string::npos);
  }
}

}  // namespace
TEST_CASE("a leading command word selects eval, inspect or export") {
  CHECK(parse({}).command == command_kind::train);
  const char* argv[] = {"downpour", "eval", "--checkpoint=x.ckpt"};
  std::ostringstream out;
  auto o = parse_options(3, argv, out);
  REQUIRE(o);
  CHECK(o->command == command_kind::eval);
  CHECK(o->checkpoint_file == "x.ckpt");
  const char* bad[] = {"downpour", "evaluate"};
  CHECK_THROWS_WITH_AS(parse_options(2, bad, out),
                       "config: unknown command 'evaluate' (expected "
                       "train|eval|inspect|export|status|plot, or options only)",
                       config_error);
}

TEST_CASE("TLS needs all three files and a node timeout must outlast two heartbeats") {
  CHECK(error_of({"--tls-ca=/etc/hostname"}) ==
        "config: --tls-ca, --tls-cert and --tls-key go together (set all three or none)");
  CHECK(error_of({"--tls-ca=/nope", "--tls-cert=/nope", "--tls-key=/nope"}) ==
        "config: TLS file '/nope' does not exist");
  CHECK(error_of({"--tls-passphrase=x"}) ==
        "config: --tls-passphrase needs --tls-ca, --tls-cert and --tls-key");
  CHECK(error_of({"--heartbeat-interval=1", "--node-timeout=2"}).find(
            "config: --node-timeout=2") == 0);
  CHECK(parse({"--heartbeat-interval=0", "--node-timeout=1"}).heartbeat_interval_s == 0);
}

TEST_CASE("ssp mode and its staleness bound are read and validated") {
  auto o = parse({"--mode=ssp", "--staleness=0"});
  CHECK(o.mode == train_mode::ssp);
  CHECK(o.staleness == 0);
  CHECK(error_of({"--staleness=-1"}) ==
        "config: --staleness=-1 is out of range (expected an integer >= 0)");
}

TEST_CASE("--ticket-lease takes 1 (a request per step, the default) to 4096 tickets at a time") {
  CHECK(parse({}).ticket_lease == 1);
  CHECK(parse({"--ticket-lease=8"}).ticket_lease == 8);
  temp_ini ini("downpour-ticket-lease", "ticket-lease = 4096\n");
  CHECK(parse({"--config", ini.str()}).ticket_lease == 4096);
  CHECK(error_of({"--ticket-lease=0"}) ==
        "config: --ticket-lease=0 is out of range (expected an integer from 1 to 4096)");
  CHECK(error_of({"--ticket-lease=4097"}) ==
        "config: --ticket-lease=4097 is out of range (expected an integer from 1 to 4096)");
}

TEST_CASE("a node gets one scheduler thread more than its workers, at least two, and up to four by cores") {
  options o;  // local, 2 ps + 2 workers
  CHECK(default_scheduler_threads(o, 2) == 3);
  CHECK(default_scheduler_threads(o, 8) == 4);
  o.worker_hosts.resize(6);
  CHECK(default_scheduler_threads(o, 8) == 7);
  o.role = role_kind::worker;
  CHECK(default_scheduler_threads(o, 1) == 2);
  CHECK(default_scheduler_threads(o, 2) == 2);
  CHECK(default_scheduler_threads(o, 16) == 4);
  o.role = role_kind::ps;
  CHECK(default_scheduler_threads(o, 2) == 2);
}

TEST_CASE("batch and validation sizes beyond any IDX file's count are refused as options") {
  CHECK(error_of({"--batch-size=4294967296"}) ==
        "config: --batch-size=4294967296 is out of range (expected an integer from 1 to "
        "4294967295)");
  CHECK(error_of({"--validation-size=4294967296"}) ==
        "config: --validation-size=4294967296 is out of range (expected an integer from 0 to "
        "4294967295)");
  CHECK(parse({"--batch-size=4294967295"}).batch_size == 4294967295u);
}

}  // namespace downpour::test_config
