#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <fstream>

#include "runtime/files/checkpoint.hpp"
#include "runtime/net/connect.hpp"
#include "runtime/net/ports.hpp"
#include "runtime/node/reference_trainer.hpp"
#include "subprocess.hpp"
#include "test_jobs.hpp"

namespace test_multiprocess {

using namespace downpour;
using downpour::testing::process;
using downpour::testing::read_text;
using downpour::testing::temp_dir;
using namespace std::chrono_literals;

namespace {

std::string hosts(const port_reservation& ports, std::size_t from, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i)
    out += (i ? "," : "") + std::string("127.0.0.1:") + std::to_string(ports[from + i]);
  return out;
}

std::vector<std::string> node_args(const std::string& role, std::size_t task,
                                   const std::string& ps, const std::string& workers,
                                   const std::string& dir, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {DOWNPOUR_BINARY, "--role=" + role,
                                   "--task=" + std::to_string(task), "--ps-hosts=" + ps,
                                   "--worker-hosts=" + workers, "--checkpoint-dir=" + dir,
                                   "--quiet", "--log-every=1000", "--connect-timeout=20"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// The output of a chief (worker 0) started against a ps of other settings:
// it must exit 1.
std::string refused_chief_output(const std::string& name, std::vector<std::string> ps_extra,
                                 std::vector<std::string> chief_extra) {
  temp_dir dir(name);
  const port_reservation ports(2);
  auto ps = hosts(ports, 0, 1), workers = hosts(ports, 1, 1);
  process ps0(node_args("ps", 0, ps, workers, dir.str(), std::move(ps_extra)), dir / "ps.log");
  process w0(node_args("worker", 0, ps, workers, dir.str(), std::move(chief_extra)),
             dir / "w.log");
  CHECK(w0.wait(60s) == 1);
  CAPTURE(w0.output());
  return w0.output();
}

}  // namespace

TEST_CASE("two ps and two worker processes on loopback train to the exact last step and exit 0") {
  temp_dir dir("mp");
  const port_reservation ports(4);
  auto ps = hosts(ports, 0, 2), workers = hosts(ports, 2, 2);
  std::vector<std::unique_ptr<process>> nodes;
  for (std::size_t k = 0; k < 2; ++k)
    nodes.push_back(std::make_unique<process>(
        node_args("ps", k, ps, workers, dir.str(), {"--last-step=250"}),
        dir / ("ps" + std::to_string(k) + ".log")));
  // The non-chief worker first: it must wait for the chief by itself.
  for (std::size_t w : {1, 0})
    nodes.push_back(std::make_unique<process>(
        node_args("worker", w, ps, workers, dir.str(), {"--last-step=250"}),
        dir / ("worker" + std::to_string(w) + ".log")));
  for (auto& n : nodes) {
    int rc = n->wait(120s);
    CAPTURE(n->output());
    CHECK(rc == 0);
  }
  auto summary = read_text(dir / "summary.json");
  CHECK(summary.find("\"global_step\": 250,") != std::string::npos);
  CHECK(nodes[3]->output().find("final: global_step=250 ") != std::string::npos);
}

TEST_CASE("one ps and one worker process end where the reference trainer ends") {
  temp_dir dir("mp-oracle");
  const port_reservation ports(2);
  auto ps = hosts(ports, 0, 1), workers = hosts(ports, 1, 1);
  process ps0(node_args("ps", 0, ps, workers, dir.str(), {"--last-step=60"}), dir / "ps.log");
  process w0(node_args("worker", 0, ps, workers, dir.str(), {"--last-step=60", "--pipeline=off"}),
             dir / "w.log");
  REQUIRE(w0.wait(120s) == 0);
  REQUIRE(ps0.wait(60s) == 0);
  options o;
  o.last_step = 60;
  std::ostringstream log;
  auto reference = run_reference(o, downpour::testing::job_for(o), log);
  CHECK(downpour::testing::holds_bits_of(read_checkpoint(dir / "model.ckpt-60"), reference));
}

TEST_CASE("a worker started with a different cluster config is refused with the difference named") {
  CHECK(refused_chief_output("mismatch", {"--last-step=100"}, {"--last-step=200"})
            .find("last-step=200 here but last-step=100 at ps 0") != std::string::npos);
}

TEST_CASE("a worker of another model than the ps's is refused with both models named") {
  CHECK(refused_chief_output("model-mismatch", {"--hidden-units=300"}, {"--model=softmax"})
            .find("model=softmax 784-10 here but model=mlp 784-300-10 at ps 0") !=
        std::string::npos);
}

// A socket listening on an ephemeral port of address that nobody accepts
// from: the kernel still completes TCP handshakes into its backlog.
struct silent_listener {
  int fd = -1;
  std::string port;
  explicit silent_listener(std::uint32_t address) {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(address);
    socklen_t len = sizeof addr;
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(fd, 16) == 0);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    port = std::to_string(ntohs(addr.sin_port));
  }
  ~silent_listener() { ::close(fd); }
  silent_listener(const silent_listener&) = delete;
  silent_listener& operator=(const silent_listener&) = delete;
};

TEST_CASE("a ps whose port is taken fails with one line naming the address") {
  temp_dir dir("inuse");
  silent_listener taken(INADDR_ANY);
  const auto& port = taken.port;
  process ps0(node_args("ps", 0, "127.0.0.1:" + port, "127.0.0.1:1", dir.str()), dir / "ps.log");
  CHECK(ps0.wait(30s) == 1);
  CHECK(ps0.output().find("cannot listen as ps 0 on 127.0.0.1:" + port) != std::string::npos);
}

TEST_CASE("a worker gives up on an unreachable ps after the connect timeout, naming it") {
  temp_dir dir("unreachable");
  const port_reservation ports(2);
  auto args = node_args("worker", 0, hosts(ports, 0, 1), hosts(ports, 1, 1), dir.str());
  args.back() = "--connect-timeout=0.5";
  process w0(args, dir / "w.log");
  CHECK(w0.wait(30s) == 1);
  CHECK(w0.output().find("cannot reach ps 0 at 127.0.0.1:" + std::to_string(ports[0]) +
                         " within 0.5 s") != std::string::npos);
}

TEST_CASE("a worker gives up on a ps that accepts connections but never answers, naming it") {
  temp_dir dir("hung");
  // Connections complete, then nothing answers, as with a stopped (SIGSTOP) ps.
  silent_listener hung(INADDR_LOOPBACK);
  const auto& port = hung.port;
  auto args = node_args("worker", 0, "127.0.0.1:" + port, "127.0.0.1:1", dir.str());
  args.back() = "--connect-timeout=1";
  // Without heartbeats nothing else closes the silent connection: the bound
  // is the connect timeout's alone.
  args.push_back("--heartbeat-interval=0");
  process w0(args, dir / "w.log");
  CHECK(w0.wait(60s) == 1);
  CHECK(w0.output().find("cannot reach ps 0 at 127.0.0.1:" + port + " within 1 s") !=
        std::string::npos);
  CHECK(w0.output().find("is that node hung or stopped (SIGSTOP)") != std::string::npos);
}

TEST_CASE("a task index out of range and a malformed host list are one-line errors, exit 2") {
  temp_dir dir("badargs");
  process a({DOWNPOUR_BINARY, "--role=worker", "--task=5"}, dir / "a.log");
  CHECK(a.wait(30s) == 2);
  CHECK(a.output() ==
        "downpour: config: --task=5 is out of range (expected an integer from 0 to 1 for 2 "
        "--worker-hosts)\n");
  process b({DOWNPOUR_BINARY, "--role=ps", "--ps-hosts=localhost"}, dir / "b.log");
  CHECK(b.wait(30s) == 2);
  CHECK(b.output().find("--ps-hosts entry 'localhost' is malformed") != std::string::npos);
}

}  // namespace test_multiprocess
