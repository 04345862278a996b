// --cluster-secret-file: read once, bounded, and never part of what a node
// says about itself (the fingerprint says only whether there is one).
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include "config/cluster_fingerprint.hpp"
#include "config/options.hpp"
#include "fifo.hpp"
#include "parse_options.hpp"
#include "subprocess.hpp"

namespace downpour::test_config_secret {
namespace {

using testing::error_of;
using testing::parse;

std::string write(const testing::temp_dir& dir, const std::string& name, const std::string& text) {
  const auto path = dir / name;
  std::ofstream(path) << text;
  return path;
}

TEST_CASE("a cluster secret file is read whole, without its one trailing newline") {
  testing::temp_dir dir("secret-read");
  const auto path = write(dir, "secret", "0123456789abcdefXYZ\n");
  const options o = parse({"--cluster-secret-file=" + path});
  CHECK(o.cluster_secret == "0123456789abcdefXYZ");
  CHECK(o.cluster_secret_file == path);
}

TEST_CASE("the fingerprint says whether there is a cluster secret, never what it is") {
  testing::temp_dir dir("secret-fp");
  const auto path = write(dir, "secret", "the-secret-nobody-may-see");
  const auto with = cluster_fingerprint(parse({"--cluster-secret-file=" + path}));
  CHECK(with.find("cluster-secret=set") != std::string::npos);
  CHECK(with.find("the-secret-nobody-may-see") == std::string::npos);
  CHECK(cluster_fingerprint(parse({})).find("cluster-secret=none") != std::string::npos);
}

TEST_CASE("a cluster secret shorter than 16 bytes or longer than 4096 is refused naming its size") {
  testing::temp_dir dir("secret-size");
  const auto short_one = write(dir, "short", "12345\n");
  CHECK(error_of({"--cluster-secret-file=" + short_one}) ==
        "config: --cluster-secret-file '" + short_one +
            "' holds 5 bytes; expected 16 to 4096 (e.g. head -c 32 /dev/urandom | base64 > FILE)");
  const auto long_one = write(dir, "long", std::string(5000, 'k'));
  CHECK(error_of({"--cluster-secret-file=" + long_one}).find("holds 5000 bytes; expected 16 to 4096") !=
        std::string::npos);
}

TEST_CASE("a cluster secret file that is missing or a FIFO is refused in one line, never waited on") {
  testing::temp_dir dir("secret-files");
  const auto missing = dir / "missing";
  const auto missing_error = error_of({"--cluster-secret-file=" + missing});
  CHECK(missing_error.rfind("config: --cluster-secret-file '" + missing + "': ", 0) == 0);
  CHECK(missing_error.find('\n') == std::string::npos);
  const auto fifo = dir / "fifo";
  testing::make_fifo(fifo);
  const auto fifo_error =
      testing::without_blocking(fifo, [&] { return error_of({"--cluster-secret-file=" + fifo}); });
  CHECK(fifo_error == "config: --cluster-secret-file '" + fifo + "': is a FIFO, not a regular file");
}

}  // namespace
}  // namespace downpour::test_config_secret
