// scripts/make-certs: a private CA and per-host certificates that openssl
// verifies, a second CA whose certificates do not, and safe reruns.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "subprocess.hpp"

namespace test_certs {

using downpour::testing::process;
using downpour::testing::read_text;
using downpour::testing::temp_dir;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

const std::string make_certs = std::string(DOWNPOUR_SOURCE_DIR) + "/scripts/make-certs";

struct run_result {
  int code = -1;
  std::string output;  // stdout and stderr
};

// Runs a command found on PATH (through sh, without its parsing: "$@").
run_result sh(const temp_dir& dir, const std::vector<std::string>& args) {
  auto tag = std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
  std::vector<std::string> argv = {"/bin/sh", "-c", "exec \"$@\"", "sh"};
  argv.insert(argv.end(), args.begin(), args.end());
  process p(argv, dir / ("log-" + tag + ".txt"));
  run_result r;
  r.code = p.wait(300s);
  r.output = p.output();
  fs::remove(dir / ("log-" + tag + ".txt"));
  return r;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

unsigned mode_of(const std::string& path) {
  struct stat st {};
  ::stat(path.c_str(), &st);
  return st.st_mode & 0777;
}

}  // namespace

TEST_CASE("make-certs makes a CA and host certificates that verify, and only against it") {
  temp_dir dir("certs");
  const std::string a = dir / "a";
  const std::string b = dir / "b";
  auto made = sh(dir, {make_certs, a, "127.0.0.1,localhost,node-1.example"});
  REQUIRE_MESSAGE(made.code == 0, made.output);
  CHECK(contains(made.output, "make-certs: new CA " + a + "/ca.pem"));
  for (const char* name : {"ca", "127.0.0.1", "localhost", "node-1.example"}) {
    INFO(name);
    REQUIRE(fs::is_regular_file(a + "/" + name + ".pem"));
    REQUIRE(fs::is_regular_file(a + "/" + name + ".key"));
    CHECK(mode_of(a + "/" + name + ".key") == 0600);
    CHECK(contains(read_text(a + "/" + name + ".pem"), "-----BEGIN CERTIFICATE-----"));
    CHECK(contains(read_text(a + "/" + name + ".key"), "PRIVATE KEY-----"));
  }
  // No work files left behind.
  for (const auto& e : fs::directory_iterator(a)) CHECK(e.path().extension() != ".csr");
  CHECK(std::distance(fs::directory_iterator(a), fs::directory_iterator()) == 8);

  for (const char* host : {"127.0.0.1", "localhost", "node-1.example"}) {
    INFO(host);
    auto v = sh(dir, {"openssl", "verify", "-CAfile", a + "/ca.pem", a + "/" + host + ".pem"});
    CHECK(v.code == 0);
    CHECK(contains(v.output, ": OK"));
    // The key belongs to the certificate.
    auto cert_key =
        sh(dir, {"openssl", "x509", "-in", a + "/" + host + ".pem", "-noout", "-pubkey"});
    auto key_key = sh(dir, {"openssl", "pkey", "-in", a + "/" + host + ".key", "-pubout"});
    CHECK(cert_key.code == 0);
    CHECK(cert_key.output == key_key.output);
  }
  auto san = [&](const std::string& pem) {
    return sh(dir, {"openssl", "x509", "-in", pem, "-noout", "-ext", "subjectAltName"}).output;
  };
  CHECK(contains(san(a + "/127.0.0.1.pem"), "IP Address:127.0.0.1"));
  CHECK(contains(san(a + "/localhost.pem"), "DNS:localhost"));
  CHECK(contains(san(a + "/localhost.pem"), "IP Address:127.0.0.1"));
  CHECK(contains(san(a + "/node-1.example.pem"), "DNS:node-1.example"));
  auto usage = sh(dir, {"openssl", "x509", "-in", a + "/127.0.0.1.pem", "-noout", "-ext",
                        "extendedKeyUsage,basicConstraints"});
  CHECK(contains(usage.output, "TLS Web Server Authentication"));
  CHECK(contains(usage.output, "TLS Web Client Authentication"));
  CHECK(contains(usage.output, "CA:FALSE"));

  // A second run into another directory is another CA: its certificates do
  // not verify against the first CA, nor the first's against it.
  auto other = sh(dir, {make_certs, b, "127.0.0.1"});
  REQUIRE_MESSAGE(other.code == 0, other.output);
  CHECK(read_text(a + "/ca.pem") != read_text(b + "/ca.pem"));
  auto foreign = sh(dir, {"openssl", "verify", "-CAfile", a + "/ca.pem", b + "/127.0.0.1.pem"});
  CHECK(foreign.code != 0);
  auto reverse = sh(dir, {"openssl", "verify", "-CAfile", b + "/ca.pem", a + "/127.0.0.1.pem"});
  CHECK(reverse.code != 0);
  auto own = sh(dir, {"openssl", "verify", "-CAfile", b + "/ca.pem", b + "/127.0.0.1.pem"});
  CHECK(own.code == 0);
}

TEST_CASE("make-certs reruns keep the CA unless --force") {
  temp_dir dir("certs-rerun");
  const std::string a = dir / "a";
  REQUIRE(sh(dir, {make_certs, a, "127.0.0.1"}).code == 0);
  const std::string ca = read_text(a + "/ca.pem");
  const std::string ca_key = read_text(a + "/ca.key");
  const std::string host = read_text(a + "/127.0.0.1.pem");

  // Again, with one more host: the CA and the existing certificate are kept.
  auto again = sh(dir, {make_certs, a, "127.0.0.1,worker1"});
  REQUIRE_MESSAGE(again.code == 0, again.output);
  CHECK(contains(again.output, "make-certs: using the existing CA " + a + "/ca.pem"));
  CHECK(contains(again.output, "make-certs: kept " + a + "/127.0.0.1.pem"));
  CHECK(read_text(a + "/ca.pem") == ca);
  CHECK(read_text(a + "/ca.key") == ca_key);
  CHECK(read_text(a + "/127.0.0.1.pem") == host);
  CHECK(sh(dir, {"openssl", "verify", "-CAfile", a + "/ca.pem", a + "/worker1.pem"}).code == 0);

  // --force: a new CA, and the named hosts are signed by it.
  auto forced = sh(dir, {make_certs, "--force", a, "127.0.0.1"});
  REQUIRE_MESSAGE(forced.code == 0, forced.output);
  CHECK(read_text(a + "/ca.pem") != ca);
  CHECK(read_text(a + "/127.0.0.1.pem") != host);
  CHECK(sh(dir, {"openssl", "verify", "-CAfile", a + "/ca.pem", a + "/127.0.0.1.pem"}).code == 0);

  // Half a CA is never touched.
  fs::remove(a + "/ca.key");
  const std::string half = read_text(a + "/ca.pem");
  auto refused = sh(dir, {make_certs, a, "127.0.0.1"});
  CHECK(refused.code == 1);
  CHECK(contains(refused.output, "has only one of ca.pem and ca.key; refusing to touch it"));
  CHECK(read_text(a + "/ca.pem") == half);
}

TEST_CASE("make-certs rejects bad arguments") {
  temp_dir dir("certs-usage");
  auto none = sh(dir, {make_certs});
  CHECK(none.code == 2);
  CHECK(contains(none.output,
                 "usage: scripts/make-certs [--force] [--days N] OUTDIR HOST[,HOST...]"));
  auto port = sh(dir, {make_certs, dir / "x", "127.0.0.1:1111"});
  CHECK(port.code == 2);
  CHECK(contains(port.output, "make-certs: host '127.0.0.1:1111' looks like host:port"));
  auto bad = sh(dir, {make_certs, dir / "x", "a/b"});
  CHECK(bad.code == 2);
  CHECK(contains(bad.output, "make-certs: host 'a/b' is not a host name or IP address"));
  auto empty = sh(dir, {make_certs, dir / "x", "a,,b"});
  CHECK(empty.code == 2);
  auto ca = sh(dir, {make_certs, dir / "x", "ca"});
  CHECK(ca.code == 2);
  auto days = sh(dir, {make_certs, "--days", "soon", dir / "x", "h"});
  CHECK(days.code == 2);
  CHECK_FALSE(fs::exists(dir / "x"));
}

}  // namespace test_certs
