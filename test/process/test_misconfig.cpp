// Misconfiguration refused where it is: host lists naming one address twice,
// sizes no data set can fill, input that is no regular file or too large, a
// ps left without a chief, an exception inside an actor. Each ends with one
// line and an exit code, never a hang.
#include <doctest/doctest.h>

#include <stdexcept>

#include "protocol/failure.hpp"
#include "actors/parameter_shard.hpp"
#include "cluster_procs.hpp"
#include "fifo.hpp"
#include "runtime/net/connect.hpp"
#include "runtime/net/ports.hpp"
#include "runtime/node/actor_configs.hpp"
#include "runtime/node/chief.hpp"
#include "runtime/node/node.hpp"
#include "test_jobs.hpp"

namespace test_misconfig {

using namespace downpour;
using namespace downpour::testing;
using namespace std::chrono_literals;

namespace {

std::vector<std::string> node_args(const std::string& role, const std::string& ps,
                                   const std::string& workers, const temp_dir& dir,
                                   std::vector<std::string> extra = {}) {
  std::vector<std::string> a = {DOWNPOUR_BINARY,
                                "--role=" + role,
                                "--ps-hosts=" + ps,
                                "--worker-hosts=" + workers,
                                "--checkpoint-dir=" + dir.str(),
                                "--quiet"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

std::string at(std::uint16_t port) {
  return "127.0.0.1:" + std::to_string(port);
}

std::size_t lines_in(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

}  // namespace

TEST_CASE("a host:port named twice, in any spelling or role, is one config line and exit 2") {
  temp_dir dir("duplicate-hosts");
  const port_reservation ports(2);
  const std::string p = std::to_string(ports[0]);
  struct clash {
    std::string ps, workers, first, second;
  };
  const std::vector<clash> clashes = {
      {at(ports[0]) + "," + at(ports[0]), at(ports[1]),
       "--ps-hosts entry 127.0.0.1:" + p + " (ps 1)",
       "--ps-hosts entry 127.0.0.1:" + p + " (ps 0)"},
      {at(ports[0]) + ",localhost:" + p, at(ports[1]),
       "--ps-hosts entry localhost:" + p + " (ps 1)",
       "--ps-hosts entry 127.0.0.1:" + p + " (ps 0)"},
      {at(ports[0]), at(ports[1]) + ",localhost:" + p,
       "--worker-hosts entry localhost:" + p + " (worker 1)",
       "--ps-hosts entry 127.0.0.1:" + p + " (ps 0)"},
  };
  for (const auto& c : clashes) {
    for (const std::string role : {"ps", "worker"}) {
      CAPTURE(c.ps);
      CAPTURE(c.workers);
      CAPTURE(role);
      process node(node_args(role, c.ps, c.workers, dir), dir / "node.log");
      CHECK(node.wait(30s) == 2);
      const auto out = node.output();
      CHECK(out.rfind("downpour: config: " + c.first + " is the same address as " + c.second, 0) ==
            0);
      CHECK(lines_in(out) == 1);
    }
  }
}

TEST_CASE("sizes no data set can fill are one line before anything starts, in every role") {
  temp_dir dir("sizes");
  const port_reservation ports(2);
  struct refusal {
    std::vector<std::string> options;
    std::string role;
    int code;
    std::string says;
  };
  const std::string too_big = "data: --batch-size=55001 exceeds the 55000 training examples of ";
  const std::vector<refusal> refusals = {
      {{"--batch-size=55001"}, "local", 1, too_big},
      {{"--batch-size=55001", "--transport=tcp"}, "local", 1, too_big},
      {{"--batch-size=55001"}, "worker", 1, too_big},
      {{"--batch-size=55001"}, "reference", 1, too_big},
      {{"--validation-size=60000"},
       "local",
       1,
       "validation size 60000 takes all 60000 training examples, leaving none to train on"},
      {{"--validation-size=60000"}, "worker", 1, "leaving none to train on"},
      {{"--batch-size=4294967296"},
       "local",
       2,
       "downpour: config: --batch-size=4294967296 is out of range (expected an integer from 1 "
       "to 4294967295)"},
      {{"--batch-size=4294967296"}, "ps", 2, "downpour: config: --batch-size=4294967296"},
      {{"--validation-size=4294967296"}, "worker", 2, "downpour: config: --validation-size="},
  };
  for (const auto& r : refusals) {
    CAPTURE(r.options[0]);
    CAPTURE(r.role);
    auto extra = r.options;
    extra.push_back("--connect-timeout=60");  // a node that waited for peers would fail the bound
    process node(node_args(r.role, at(ports[0]), at(ports[1]), dir, extra), dir / "node.log");
    CHECK(node.wait(60s) == r.code);
    const auto out = node.output();
    CAPTURE(out);
    CHECK(out.find(r.says) != std::string::npos);
    CHECK(lines_in(out) == 1);
  }
}

TEST_CASE("a ps that no chief ever reaches exits 1 after --connect-timeout, saying so") {
  temp_dir dir("lone-ps");
  const port_reservation ports(2);
  process ps(node_args("ps", at(ports[0]), at(ports[1]), dir, {"--connect-timeout=2"}),
             dir / "ps.log");
  CHECK(ps.wait(30s) == 1);
  const auto out = ps.output();
  CAPTURE(out);
  CHECK(out.find("ps:0 ERROR no chief initialised this shard within 2 s (is the chief (worker "
                 "0) at " +
                 at(ports[1]) + " running?); this ps stops") != std::string::npos);
}

TEST_CASE("a ps whose chief is killed and not started again exits 1 after --connect-timeout") {
  temp_dir dir("chief-gone");
  auto c = make_cluster(1, 1, dir,
                        {"--last-step=1000000", "--log-every=100", "--save-checkpoint-secs=0",
                         "--connect-timeout=3"});
  process ps(c.node("ps", 0), dir / "ps.log");
  process chief(c.node("worker", 0), dir / "w0.log");
  const bool trained = chief.wait_for_output("global_step:", 120s);
  CAPTURE(chief.output());
  CAPTURE(ps.output());
  REQUIRE(trained);
  chief.kill(SIGKILL);
  CHECK(chief.wait(30s) == 128 + SIGKILL);
  CHECK(ps.wait(60s) == 1);
  const auto out = ps.output();
  CAPTURE(out);
  const std::string named = "the chief (worker 0) at " + c.workers;
  CHECK(out.find(named + " is gone; waiting up to 3 s") != std::string::npos);
  CHECK(out.find("ps:0 ERROR " + named + " did not come back within 3 s; this ps stops") !=
        std::string::npos);
}

TEST_CASE("an exception inside an actor of the chief's process ends the job with its message") {
  temp_dir dir("actor-exception");
  auto opts = local_job(1, 1, 1000000, dir.str());
  const job_model job = job_for(opts);
  node_config cfg{opts, job.layout};
  caf::actor_system sys{cfg};
  std::vector<shard_actor> shards{spawn_parameter_shard(sys, shard_config_for(opts, job.layout, 0))};
  // A worker that throws when told to start, as any handler might.
  auto start = [&](supervisor_actor, coordinator_actor,
                   const std::vector<shard_actor>&) -> caf::expected<std::vector<worker_actor>> {
    auto faulty = sys.spawn([](worker_actor::pointer self) -> worker_actor::behavior_type {
      end_on_exception(self);
      return {[](start_atom) { throw std::runtime_error("injected fault"); }, [](stop_atom) {},
              [](recall_atom) {}};
    });
    caf::anon_send(faulty, start_atom_v);
    return std::vector<worker_actor>{faulty};
  };
  auto result = run_chief(sys, opts, job, shards, start, nullptr);
  REQUIRE_FALSE(result);
  CAPTURE(describe(result.error()));
  CHECK(result.error() == errc::failed);
  CHECK(describe(result.error()).find(": injected fault") != std::string::npos);
}

TEST_CASE("input that is no regular file, too large or out of range is one line, never a wait") {
  temp_dir dir("bounded-input");
  const std::string fifo = dir / "fifo";
  make_fifo(fifo);
  const std::string mnist = dir / "mnist";
  std::filesystem::create_directory(mnist);
  for (const char* name : {"train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                           "t10k-labels-idx1-ubyte"})
    std::filesystem::copy(std::string(DOWNPOUR_DEFAULT_DATA_DIR) + "/" + name + ".gz",
                          mnist + "/" + name + ".gz");
  make_fifo(mnist + "/train-images-idx3-ubyte");
  const std::string huge = dir / "huge.ini";
  std::ofstream(huge) << "cluster-name = " << std::string(50 << 20, 'x') << "\n";
  const std::string long_value = dir / "long.ini";
  std::ofstream(long_value) << "cluster-name = " << std::string(100 << 10, 'x') << "\n";
  struct refusal {
    std::vector<std::string> options;
    int code;
    std::string says;
  };
  const std::vector<refusal> refusals = {
      {{"--config=/dev/zero"}, 2, "config: --config file '/dev/zero': is a character device"},
      {{"--config=" + fifo}, 2, "config: --config file '" + fifo + "': is a FIFO"},
      {{"--config=" + huge}, 2, "bytes, more than the 1048576 allowed"},
      {{"--config=" + long_value}, 2, "cluster-name is 102400 bytes long, more than the limit of 65536"},
      {{"--connect-timeout=1e300"}, 2,
       "config: --connect-timeout=1e300 is out of range (expected seconds > 0 and at most 1000000)"},
      {{"--data-format=csv", "--train-file=" + fifo, "--test-file=" + fifo}, 1,
       "data: " + fifo + ": is a FIFO, not a regular file"},
      {{"--data-dir=" + mnist}, 1,
       "data: " + mnist + "/train-images-idx3-ubyte: is a FIFO, not a regular file"},
  };
  for (const auto& r : refusals) {
    CAPTURE(r.options[0]);
    std::vector<std::string> args = {DOWNPOUR_BINARY, "--quiet", "--checkpoint-dir=" + dir / "ckpt"};
    args.insert(args.end(), r.options.begin(), r.options.end());
    process node(args, dir / "node.log");
    CHECK(node.wait(30s) == r.code);
    const auto out = node.output();
    CAPTURE(out);
    CHECK(out.find(r.says) != std::string::npos);
    CHECK(lines_in(out) == 1);
    CHECK(node.peak_rss_kb() < 256 * 1024);  // /dev/zero grew to 3.3 GB, a 50 MB value to 794 MB
  }
}

}  // namespace test_misconfig
