// Every examples/*.ini is a valid config for the real binary: it parses,
// validates and trains one step (as the reference role, so no ports are
// needed). The TLS example gets its certificates from the very make-certs
// command its header comment shows.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "subprocess.hpp"

namespace test_examples {

using downpour::testing::process;
using downpour::testing::read_text;
using downpour::testing::temp_dir;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

const fs::path source_dir = DOWNPOUR_SOURCE_DIR;

struct run_result {
  int code = -1;
  std::string output;
};

// Runs argv with dir as the working directory.
run_result run_in(const std::string& dir, const std::vector<std::string>& args) {
  auto tag = std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
  std::vector<std::string> argv = {"/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", dir};
  argv.insert(argv.end(), args.begin(), args.end());
  process p(argv, (fs::path(dir) / ("run-" + tag + ".log")).string());
  run_result r;
  r.code = p.wait(300s);
  r.output = p.output();
  return r;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::vector<fs::path> example_configs() {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(source_dir / "examples"))
    if (e.path().extension() == ".ini") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

// The first "#   scripts/make-certs ..." command of a header comment, as words.
std::vector<std::string> make_certs_command(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    auto at = line.find("scripts/make-certs ");
    if (line.rfind("#", 0) != 0 || at == std::string::npos) continue;
    std::istringstream words(line.substr(at));
    std::vector<std::string> argv;
    for (std::string w; words >> w;) argv.push_back(w);
    argv[0] = (source_dir / "scripts/make-certs").string();
    return argv;
  }
  return {};
}

}  // namespace

TEST_CASE("the examples are all there") {
  std::vector<std::string> names;
  for (const auto& f : example_configs()) names.push_back(f.filename().string());
  for (const char* want : {"cluster_async.ini", "cluster_backup.ini", "cluster_ssp.ini",
                           "cluster_sync.ini", "cluster_tls.ini"}) {
    INFO(want);
    CHECK(std::find(names.begin(), names.end(), want) != names.end());
  }
}

TEST_CASE("every example config parses and trains a step") {
  for (const auto& config : example_configs()) {
    const std::string name = config.filename().string();
    CAPTURE(name);
    const std::string text = read_text(config.string());
    // The header says how to run it.
    CHECK(text.rfind("#", 0) == 0);
    CHECK(contains(text, "examples/run-cluster.sh examples/" + name));

    temp_dir dir("example");
    if (contains(text, "tls-ca")) {
      auto command = make_certs_command(text);
      REQUIRE_MESSAGE(!command.empty(), "the TLS example shows no scripts/make-certs command");
      auto certs = run_in(dir.str(), command);
      REQUIRE_MESSAGE(certs.code == 0, certs.output);
    }
    std::vector<std::string> args = {DOWNPOUR_BINARY, "--config",
                                     config.string(), "--role=reference",
                                     "--last-step=1", "--checkpoint-dir=" + (dir / "ckpt"),
                                     "--quiet",       "--save-checkpoint-secs=0"};
    // A sparse model trains on shards (no reference loop), here on small planted data.
    if (contains(text, "data-format = libsvm")) {
      auto data = run_in(dir.str(), {DOWNPOUR_GEN_LIBSVM, "--out", dir / "sparse", "--train",
                                     "1000", "--test", "100"});
      REQUIRE_MESSAGE(data.code == 0, data.output);
      args[3] = "--role=local";
      args.push_back("--train-file=" + (dir / "sparse/train.libsvm"));
      args.push_back("--test-file=" + (dir / "sparse/test.libsvm"));
    }
    if (contains(text, "data-format = criteo")) {
      auto data = run_in(dir.str(), {DOWNPOUR_GEN_CRITEO, "--out", dir / "criteo", "--train",
                                     "1000", "--test", "100", "--files", "2", "--gzip",
                                     "--vocabulary-scale", "0.01"});
      REQUIRE_MESSAGE(data.code == 0, data.output);
      args[3] = "--role=local";
      args.push_back("--train-file=" + (dir / "criteo/train-*.tsv.gz"));
      args.push_back("--test-file=" + (dir / "criteo/test.tsv.gz"));
    }
    auto r = run_in(dir.str(), args);
    CHECK_MESSAGE(r.code == 0, r.output);
    CHECK_MESSAGE(contains(r.output, "final: global_step=1 "), r.output);
  }
}

TEST_CASE("the TLS example's certificate is overridden per node on the command line") {
  const fs::path config = source_dir / "examples/cluster_tls.ini";
  temp_dir dir("example-tls");
  auto certs = run_in(dir.str(), {(source_dir / "scripts/make-certs").string(), "certs",
                                  "127.0.0.1,worker1.example"});
  REQUIRE_MESSAGE(certs.code == 0, certs.output);
  // The command line wins over the file: a per-node certificate is used ...
  auto own = run_in(
      dir.str(), {DOWNPOUR_BINARY, "--config", config.string(), "--role=reference", "--last-step=1",
                  "--checkpoint-dir=" + (dir / "ckpt"), "--quiet", "--save-checkpoint-secs=0",
                  "--tls-cert=certs/worker1.example.pem", "--tls-key=certs/worker1.example.key"});
  CHECK_MESSAGE(own.code == 0, own.output);
  // ... and is the one checked: a missing one is named.
  auto missing = run_in(
      dir.str(), {DOWNPOUR_BINARY, "--config", config.string(), "--role=reference", "--last-step=1",
                  "--quiet", "--tls-cert=certs/ps9.pem", "--tls-key=certs/ps9.key"});
  CHECK(missing.code == 2);
  CHECK_MESSAGE(contains(missing.output, "'certs/ps9.pem' does not exist"), missing.output);
}

}  // namespace test_examples
