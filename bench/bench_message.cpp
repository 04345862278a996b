// What one remote request and its response cost in CAF 0.17's network layer,
// in CPU seconds summed over both processes: the floor under every message a
// worker and a shard exchange (docs/performance.md, the sparse job's CPU per
// example). A server process echoes; a client process sends requests from an
// event-based actor, as a worker does; both run with a node's settings
// (runtime/node/caf_tuning.hpp). Sizes: empty (an atom each way) and the
// keys and values of one batch's pull from one of two shards (about 550
// rows: 4.4 KB of keys up, 2.2 KB of floats back) and from one shard.
//
// --knobs compares CAF's settings (bench/message_knobs.hpp) side by side:
// each round starts a server and a client actor system per setting, in turn
// (the order reversed every other round, so the machine's drift cancels),
// and the table gives each setting's medians over the rounds and its ratios
// to "node" in the same round.
//
//   bench_message [--round-trips N] [--json FILE]
//   bench_message --knobs [NAME,NAME...] [--rounds R] [--round-trips N] [--json FILE]
#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <iostream>
#include <memory>
#include <string>

#include "bench/bench_common.hpp"
#include "bench/message_loop.hpp"
#include "bench/message_table.hpp"
#include "test/support/subprocess.hpp"

namespace downpour {
namespace {

using bench::knob;
using bench::report;

struct knob_config : caf::actor_system_config {
  explicit knob_config(const knob& k) {
    load<caf::io::middleman>();
    k.configure(*this);
  }
};

int serve(const knob& k) {
  knob_config cfg{k};
  caf::actor_system sys{cfg};
  auto port = caf::io::publish(sys.spawn(bench::echo), 0, "127.0.0.1");
  if (!port) return 1;
  std::cout << "port " << *port << std::endl;
  sys.await_all_actors_done();  // until the parent kills it
  return 0;
}

// A server process with one setting; killed with this object.
struct server_process {
  std::unique_ptr<testing::process> proc;
  std::uint16_t port = 0;
};

server_process start_server(const knob& k, const std::filesystem::path& dir) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  server_process s;
  s.proc = std::make_unique<testing::process>(
      std::vector<std::string>{self, "--serve", "--knob", k.name}, dir / ("server-" + k.name + ".log"));
  if (!s.proc->wait_for_output("port ", std::chrono::seconds(30)))
    throw std::runtime_error("the server (" + k.name + ") did not start: " + s.proc->output());
  const auto out = s.proc->output();
  s.port = static_cast<std::uint16_t>(std::stoi(out.substr(out.find("port ") + 5)));
  return s;
}

// Each exchange measured once under setting k, a fresh pair of processes.
std::vector<bench::cost> run_setting(const knob& k, const std::vector<bench::exchange>& what,
                                     long n, const std::filesystem::path& dir) {
  server_process server = start_server(k, dir);
  std::vector<bench::cost> costs;
  {
    knob_config cfg{k};
    caf::actor_system sys{cfg};
    auto remote = sys.middleman().remote_actor("127.0.0.1", server.port);
    if (!remote) throw std::runtime_error("cannot connect: " + sys.render(remote.error()));
    for (const auto& e : what) costs.push_back(bench::measure(sys, *remote, e, n));
  }
  server.proc->kill(SIGKILL);
  return costs;
}

const std::vector<bench::exchange>& exchanges() {
  static const std::vector<bench::exchange> all = {
      {"empty request and reply", 0, 0, 1},
      {"pull of 550 rows (4.4 KB up, 2.2 KB back)", 4400, 2200, 1},
      {"pull of 1100 rows (8.8 KB up, 4.4 KB back)", 8800, 4400, 1},
      {"8 pulls of 550 rows in flight", 4400, 2200, 8},
  };
  return all;
}

int node_costs(long n, const std::string& json, const std::filesystem::path& dir) {
  const knob node = *bench::knob_named("node");
  const std::vector<bench::exchange> what(exchanges().begin(), exchanges().begin() + 3);
  const auto costs = run_setting(node, what, n, dir);
  report r("bench_message");
  r.note("setting", "two processes on loopback, " + node.what);
  r.note("load", bench::loadavg() + ", " + bench::cores_note());
  for (std::size_t i = 0; i < what.size(); ++i) {
    r.value(what[i].name + ": CPU per round trip, both processes", {costs[i].cpu_us}, "us");
    r.value(what[i].name + ": wall time per round trip", {costs[i].wall_us}, "us");
    r.value(what[i].name + ": latency p50", {costs[i].p50_us}, "us");
    r.value(what[i].name + ": latency p99", {costs[i].p99_us}, "us");
  }
  r.print(std::cout);
  r.write_json(json);
  return 0;
}

std::vector<knob> chosen_knobs(const std::string& names) {
  if (names.empty()) return bench::knobs();
  std::vector<knob> out{*bench::knob_named("node")};
  std::size_t from = 0;
  while (from <= names.size()) {
    const auto to = std::min(names.find(',', from), names.size());
    const auto name = names.substr(from, to - from);
    from = to + 1;
    if (name == "node" || name.empty()) continue;
    auto k = bench::knob_named(name);
    if (!k) throw std::runtime_error("bench_message: no setting named " + name);
    out.push_back(*k);
  }
  return out;
}

}  // namespace
}  // namespace downpour

int main(int argc, char** argv) {
  using namespace downpour;
  bench::cli args(argc, argv, "bench/message.json");
  long n = 0;
  int rounds = 4;
  std::string serve_knob = "node", sweep;
  bool serving = false, knobs = false;
  const auto& rest = args.rest;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    const bool has_value = i + 1 < rest.size() && rest[i + 1].rfind("--", 0) != 0;
    if (rest[i] == "--serve") serving = true;
    else if (rest[i] == "--knob" && has_value) serve_knob = rest[++i];
    else if (rest[i] == "--knobs") {
      knobs = true;
      if (has_value) sweep = rest[++i];
    }
    else if (rest[i] == "--rounds" && has_value) rounds = std::atoi(rest[++i].c_str());
    else if (rest[i] == "--round-trips" && has_value) n = std::atol(rest[++i].c_str());
  }
  try {
    if (serving) return serve(chosen_knobs(serve_knob).back());
    testing::temp_dir dir("bench-message");
    const std::filesystem::path logs{dir.str()};
    if (!knobs) return node_costs(n > 0 ? n : 20000, args.json, logs);
    return bench::compare_knobs(
        chosen_knobs(sweep), exchanges(), rounds, n > 0 ? n : 5000, args.json,
        [&](const bench::knob& k, const std::vector<bench::exchange>& what, long count) {
          return run_setting(k, what, count, logs);
        });
  } catch (const std::exception& e) {
    std::cerr << "bench_message: " << e.what() << "\n";
    return 1;
  }
}
