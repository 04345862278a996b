// What the configuration accepts at most: durations, value lengths, the
// config file itself (docs/options.md, "Limits").
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "config/options.hpp"
#include "fifo.hpp"
#include "parse_options.hpp"
#include "subprocess.hpp"

namespace downpour::test_config_bounds {
namespace {

using testing::error_of;
using testing::parse;
using testing::temp_ini;

// The options whose --help placeholder is SEC: every duration option.
std::vector<std::string> duration_options() {
  std::vector<std::string> names;
  std::istringstream help(help_text());
  for (std::string line; std::getline(help, line);) {
    std::istringstream words(line);
    std::string name, arg;
    if (words >> name >> arg && arg == "SEC" && name.rfind("--", 0) == 0) names.push_back(name);
  }
  return names;
}

TEST_CASE("every duration option is bounded by 1000000 s, named with its value and range") {
  const auto names = duration_options();
  CHECK(names == std::vector<std::string>{"--save-checkpoint-secs", "--connect-timeout",
                                          "--stop-grace", "--heartbeat-interval",
                                          "--node-timeout"});
  for (const auto& name : names) {
    CAPTURE(name);
    // 1e300 seconds overflowed the conversion to CAF's nanosecond timespan.
    const std::string error = error_of({name + "=1e300"});
    CHECK(error.rfind("config: " + name + "=1e300 is out of range (expected seconds ", 0) == 0);
    CHECK(error.find("at most 1000000)") != std::string::npos);
    CHECK(error_of({name + "=1000000.5"}).find(name + "=1000000.5 is out of range") !=
          std::string::npos);
    CHECK(error_of({name + "=inf"}).find("is out of range") != std::string::npos);
  }
  CHECK(error_of({"--save-checkpoint-secs=1000000", "--connect-timeout=1000000",
                  "--stop-grace=1000000", "--heartbeat-interval=400000",
                  "--node-timeout=1000000"}) == "(no error)");
  CHECK(parse({"--connect-timeout=1000000"}).connect_timeout_s == 1e6);
  CHECK(error_of({"--heartbeat-interval=0", "--save-checkpoint-secs=0"}) == "(no error)");
  CHECK(error_of({"--node-timeout=0"}) ==
        "config: --node-timeout=0 is out of range (expected seconds > 0 and at most 1000000)");
}

TEST_CASE("a value longer than 64 KiB is refused from any source, naming the option and the limit") {
  const std::string long_value(max_option_value_bytes + 1, 'x');
  CHECK(error_of({"--cluster-name=" + long_value}) ==
        "config: --cluster-name is 65537 bytes long, more than the limit of 65536 bytes for a "
        "value");
  temp_ini ini("downpour-long-value", "checkpoint-dir = " + long_value + "\n");
  CHECK(error_of({"--config", ini.str()}) ==
        "config: " + ini.str() +
            ": checkpoint-dir is 65537 bytes long, more than the limit of 65536 bytes for a value");
  CHECK(parse({"--cluster-name=" + std::string(max_option_value_bytes, 'x')}).cluster_name.size() ==
        max_option_value_bytes);
}

TEST_CASE("a config file must be a regular file of at most 1 MiB, and a FIFO never blocks") {
  CHECK(error_of({"--config=/dev/zero"}) ==
        "config: --config file '/dev/zero': is a character device, not a regular file");
  CHECK(error_of({"--config=/tmp"}) == "config: --config file '/tmp': is a directory, not a regular file");
  testing::temp_dir dir("config-files");
  const std::string fifo = dir / "cluster.ini";
  testing::make_fifo(fifo);
  CHECK(testing::without_blocking(fifo, [&] { return error_of({"--config", fifo}); }) ==
        "config: --config file '" + fifo + "': is a FIFO, not a regular file");
  const std::string big = dir / "big.ini";
  std::ofstream(big) << "# " << std::string(max_config_file_bytes, 'x') << "\nbatch-size = 5\n";
  CHECK(error_of({"--config", big}) == "config: --config file '" + big + "': is " +
                                           std::to_string(max_config_file_bytes + 18) +
                                           " bytes, more than the 1048576 allowed");
  const std::string small = dir / "small.ini";
  std::ofstream(small) << "batch-size = 5\n";
  CHECK(parse({"--config", small}).batch_size == 5);
}

}  // namespace
}  // namespace downpour::test_config_bounds
