// bench_message's two ends: the echo actor a server process publishes, and
// the client's loop that keeps a number of requests in flight and times each
// one, with the CPU time both processes spent (getrusage) around the loop.
#pragma once

#include <sys/resource.h>

#include <caf/all.hpp>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_common.hpp"

namespace downpour::bench {

using cpu_atom = caf::atom_constant<caf::atom("cpu")>;
using ping_atom = caf::atom_constant<caf::atom("ping")>;

inline double process_cpu_s() {
  struct rusage u {};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

inline caf::behavior echo(caf::event_based_actor*) {
  return {
      [](ping_atom) { return ping_atom::value; },
      [](const std::string&, std::uint32_t reply_bytes) { return std::string(reply_bytes, 'v'); },
      [](cpu_atom) { return process_cpu_s(); },
  };
}

// Requests of request_bytes (0: an atom) answered by reply_bytes, in_flight
// of them outstanding at any time (1: one after another, as a worker pulls
// from one shard).
struct exchange {
  std::string name;
  std::uint32_t request_bytes;
  std::uint32_t reply_bytes;
  int in_flight;
};

struct cost {
  double cpu_us;   // per round trip, client and server summed
  double wall_us;  // per round trip (with several in flight: the inverse throughput)
  double p50_us;   // one request's latency, send to reply
  double p99_us;
};

struct loop_state {
  caf::actor server;
  exchange what;
  std::string payload;
  long to_send = 0;
  long to_receive = 0;
  std::vector<double> latency_us;
  std::promise<void> done;
};

void send_one(caf::event_based_actor* self, const std::shared_ptr<loop_state>& s);

inline void on_reply(caf::event_based_actor* self, const std::shared_ptr<loop_state>& s,
                     double sent_s) {
  s->latency_us.push_back((now_s() - sent_s) * 1e6);
  if (--s->to_receive == 0) {
    s->done.set_value();
    return self->quit();
  }
  if (s->to_send > 0) send_one(self, s);
}

inline void send_one(caf::event_based_actor* self, const std::shared_ptr<loop_state>& s) {
  --s->to_send;
  const double sent = now_s();
  if (s->what.request_bytes == 0)
    self->request(s->server, caf::infinite, ping_atom::value).then([self, s, sent](ping_atom) {
      on_reply(self, s, sent);
    });
  else
    self->request(s->server, caf::infinite, s->payload, s->what.reply_bytes)
        .then([self, s, sent](const std::string&) { on_reply(self, s, sent); });
}

inline std::vector<double> run_loop(caf::actor_system& sys, const caf::actor& server,
                                    const exchange& what, long round_trips) {
  auto s = std::make_shared<loop_state>();
  s->server = server;
  s->what = what;
  s->payload = std::string(what.request_bytes, 'k');
  s->to_send = s->to_receive = round_trips;
  s->latency_us.reserve(static_cast<std::size_t>(round_trips));
  auto done = s->done.get_future();
  sys.spawn([s](caf::event_based_actor* a) -> caf::behavior {
    for (int i = 0; i < s->what.in_flight && s->to_send > 0; ++i) send_one(a, s);
    return {[](ping_atom) {}};
  });
  done.wait();
  return std::move(s->latency_us);
}

// The server's CPU seconds so far.
inline double server_cpu_s(caf::scoped_actor& self, const caf::actor& server) {
  double cpu = -1;
  self->request(server, caf::infinite, cpu_atom::value)
      .receive([&](double s) { cpu = s; }, [](caf::error&) {});
  return cpu;
}

inline double percentile(std::vector<double> xs, double p) {
  if (xs.empty()) return 0;
  const auto k = static_cast<std::size_t>(p * static_cast<double>(xs.size() - 1));
  std::nth_element(xs.begin(), xs.begin() + static_cast<long>(k), xs.end());
  return xs[k];
}

inline cost measure(caf::actor_system& sys, const caf::actor& server, const exchange& what,
                    long n) {
  caf::scoped_actor self{sys};
  run_loop(sys, server, what, n / 10);  // warm-up
  const double server0 = server_cpu_s(self, server), client0 = process_cpu_s();
  const double wall0 = now_s();
  const auto latency = run_loop(sys, server, what, n);
  const double wall = now_s() - wall0;
  const double client = process_cpu_s() - client0, srv = server_cpu_s(self, server) - server0;
  const double per = 1e6 / static_cast<double>(n);
  return {(client + srv) * per, wall * per, percentile(latency, 0.5), percentile(latency, 0.99)};
}

}  // namespace downpour::bench
