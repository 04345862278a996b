// What one remote request and its response cost in CAF 0.17's network layer,
// in CPU seconds summed over both processes: the floor under every message a
// worker and a shard exchange (docs/performance.md, the sparse job's CPU per
// example). A server process echoes; a client process sends requests one
// after another from an event-based actor, as a worker does; both run with
// a node's settings (sharing scheduler, 2 threads, the middleman's own
// thread; runtime/node/node.cpp). Sizes: empty (an atom each way) and the
// keys and values of one batch's pull from one of two shards (about 550
// rows: 4.4 KB of keys up, 2.2 KB of floats back) and from one shard.
//
//   bench_message [--round-trips N] [--json FILE]
#include <sys/resource.h>

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <iostream>
#include <future>
#include <memory>
#include <string>

#include "bench/bench_common.hpp"
#include "test/support/subprocess.hpp"

namespace downpour {
namespace {

using bench::report;
using cpu_atom = caf::atom_constant<caf::atom("cpu")>;
using ping_atom = caf::atom_constant<caf::atom("ping")>;

double process_cpu_s() {
  struct rusage u {};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

struct node_like_config : caf::actor_system_config {
  node_like_config() {
    load<caf::io::middleman>();
    set("scheduler.policy", caf::atom("sharing"));
    set("scheduler.max-threads", std::size_t{2});
    set("middleman.workers", std::size_t{0});
    set("logger.console", caf::atom("none"));
  }
};

caf::behavior echo(caf::event_based_actor*) {
  return {
      [](ping_atom) { return ping_atom::value; },
      [](const std::string&, std::uint32_t reply_bytes) { return std::string(reply_bytes, 'v'); },
      [](cpu_atom) { return process_cpu_s(); },
  };
}

int serve() {
  node_like_config cfg;
  caf::actor_system sys{cfg};
  auto port = caf::io::publish(sys.spawn(echo), 0, "127.0.0.1");
  if (!port) return 1;
  std::cout << "port " << *port << std::endl;
  sys.await_all_actors_done();  // until the parent kills it
  return 0;
}

// One exchange: a request of request_bytes (0: an atom) answered by
// reply_bytes.
struct exchange {
  std::string name;
  std::uint32_t request_bytes;
  std::uint32_t reply_bytes;
};

struct loop_state {
  caf::actor server;
  exchange what;
  std::string payload;
  long left = 0;
  std::promise<void> done;
};

void send_next(caf::event_based_actor* self, std::shared_ptr<loop_state> s) {
  if (s->left-- == 0) {
    s->done.set_value();
    return self->quit();
  }
  if (s->what.request_bytes == 0)
    self->request(s->server, caf::infinite, ping_atom::value).then([self, s](ping_atom) {
      send_next(self, s);
    });
  else
    self->request(s->server, caf::infinite, s->payload, s->what.reply_bytes)
        .then([self, s](const std::string&) { send_next(self, s); });
}

// The server's CPU seconds so far.
double server_cpu_s(caf::scoped_actor& self, const caf::actor& server) {
  double cpu = -1;
  self->request(server, caf::infinite, cpu_atom::value)
      .receive([&](double s) { cpu = s; }, [](caf::error&) {});
  return cpu;
}

struct cost {
  double cpu_us;   // per round trip, client and server summed
  double wall_us;  // per round trip
};

cost measure(caf::actor_system& sys, const caf::actor& server, const exchange& what, long n) {
  caf::scoped_actor self{sys};
  auto run = [&](long round_trips) {
    auto s = std::make_shared<loop_state>();
    s->server = server;
    s->what = what;
    s->payload = std::string(what.request_bytes, 'k');
    s->left = round_trips;
    auto done = s->done.get_future();
    sys.spawn([s](caf::event_based_actor* a) -> caf::behavior {
      send_next(a, s);
      return {[](ping_atom) {}};
    });
    done.wait();
  };
  run(n / 10);  // warm-up
  const double server0 = server_cpu_s(self, server), client0 = process_cpu_s();
  const double wall = bench::time_s([&] { run(n); });
  const double client = process_cpu_s() - client0, srv = server_cpu_s(self, server) - server0;
  return {(client + srv) / static_cast<double>(n) * 1e6, wall / static_cast<double>(n) * 1e6};
}

}  // namespace
}  // namespace downpour

int main(int argc, char** argv) {
  using namespace downpour;
  bench::cli args(argc, argv, "bench/message.json");
  long n = 20000;
  for (std::size_t i = 0; i < args.rest.size(); ++i) {
    if (args.rest[i] == "--serve") return serve();
    if (args.rest[i] == "--round-trips" && i + 1 < args.rest.size()) n = std::atol(args.rest[++i].c_str());
  }
  testing::temp_dir dir("bench-message");
  std::error_code ec;
  testing::process server({std::filesystem::read_symlink("/proc/self/exe", ec).string(), "--serve"},
                          dir / "server.log");
  if (!server.wait_for_output("port ", std::chrono::seconds(30))) {
    std::cerr << "bench_message: the server did not start: " << server.output() << "\n";
    return 1;
  }
  const auto out = server.output();
  const auto port = static_cast<std::uint16_t>(std::stoi(out.substr(out.find("port ") + 5)));
  node_like_config cfg;
  caf::actor_system sys{cfg};
  auto remote = sys.middleman().remote_actor("127.0.0.1", port);
  if (!remote) {
    std::cerr << "bench_message: cannot connect: " << sys.render(remote.error()) << "\n";
    return 1;
  }
  report r("bench_message");
  r.note("setting", "two processes on loopback, sharing scheduler, 2 threads, middleman workers 0");
  r.note("load", bench::loadavg() + ", " + bench::cores_note());
  for (const exchange& e : {exchange{"empty request and reply", 0, 0},
                            exchange{"pull of 550 rows (4.4 KB up, 2.2 KB back)", 4400, 2200},
                            exchange{"pull of 1100 rows (8.8 KB up, 4.4 KB back)", 8800, 4400}}) {
    const cost c = measure(sys, *remote, e, n);
    r.value(e.name + ": CPU per round trip, both processes", {c.cpu_us}, "us");
    r.value(e.name + ": wall time per round trip", {c.wall_us}, "us");
  }
  r.print(std::cout);
  r.write_json(args.json);
  server.kill(SIGKILL);
  return 0;
}
