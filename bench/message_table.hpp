// bench_message --knobs: every setting measured in every round, in turn, and
// one table of medians over the rounds with each setting's ratios to the
// first (a node's settings) taken within a round, so the drift of a shared
// machine between rounds cancels out of them.
#pragma once

#include <ctime>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "bench/bench_common.hpp"
#include "bench/message_knobs.hpp"
#include "bench/message_loop.hpp"

namespace downpour::bench {

// The costs of each exchange under one setting, in a fresh pair of processes.
using run_fn = std::function<std::vector<cost>(const knob&, const std::vector<exchange>&, long)>;

// samples[setting][exchange][round]
using knob_samples = std::vector<std::vector<std::vector<cost>>>;

inline std::string utc_now() {
  char b[32];
  const std::time_t t = std::time(nullptr);
  std::strftime(b, sizeof b, "%Y-%m-%d %H:%M UTC", std::gmtime(&t));
  return b;
}

// Settings in order, then in reverse, and so on (ABC CBA ...): a setting's place
// in a round does not favour it over the rounds.
inline knob_samples sample_knobs(const std::vector<knob>& ks, const std::vector<exchange>& what,
                                 int rounds, long n, const run_fn& run) {
  knob_samples out(ks.size(), std::vector<std::vector<cost>>(what.size()));
  run(ks[0], what, n / 5);  // the process's first actor system pays for more than the rest
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t j = 0; j < ks.size(); ++j) {
      const std::size_t k = r % 2 ? ks.size() - 1 - j : j;
      const auto costs = run(ks[k], what, n);
      for (std::size_t e = 0; e < what.size(); ++e) out[k][e].push_back(costs[e]);
      std::cerr << "  round " << r + 1 << "/" << rounds << " " << ks[k].name << ": CPU "
                << fixed(costs[0].cpu_us, 0) << " us, p50 " << fixed(costs[0].p50_us, 0)
                << " us (" << what[0].name << ")\n";
    }
  }
  return out;
}

inline std::vector<double> field(const std::vector<cost>& xs, double cost::*member) {
  std::vector<double> out;
  for (const auto& c : xs) out.push_back(c.*member);
  return out;
}

inline std::string table_line(const knob& k, const std::vector<cost>& xs,
                              const std::vector<cost>& base) {
  const auto cpu = summarize(field(xs, &cost::cpu_us));
  const auto cpu_ratio = summarize(ratios(field(xs, &cost::cpu_us), field(base, &cost::cpu_us)));
  const auto p50_ratio = summarize(ratios(field(xs, &cost::p50_us), field(base, &cost::p50_us)));
  return "| " + k.name + " | " + fixed(summarize(field(xs, &cost::p50_us)).median, 0) + " | " +
         fixed(summarize(field(xs, &cost::p99_us)).median, 0) + " | " + fixed(cpu.median, 0) +
         " (" + fixed(cpu.min, 0) + "-" + fixed(cpu.max, 0) + ") | " +
         fixed(cpu_ratio.median, 2) + " | " + fixed(p50_ratio.median, 2) + " |\n";
}

inline void print_knob_table(std::ostream& out, const std::vector<knob>& ks,
                             const std::vector<exchange>& what, const knob_samples& s) {
  for (std::size_t e = 0; e < what.size(); ++e) {
    out << "\n" << what[e].name << ":\n\n"
        << "| setting | latency p50 us | latency p99 us | CPU us per round trip, both "
           "processes (min-max) | CPU vs " << ks[0].name << " | p50 vs " << ks[0].name
        << " |\n| --- | ---: | ---: | ---: | ---: | ---: |\n";
    for (std::size_t k = 0; k < ks.size(); ++k) out << table_line(ks[k], s[k][e], s[0][e]);
  }
  out << "\nsettings:\n";
  for (const auto& k : ks) out << "  " << k.name << ": " << k.what << "\n";
}

inline void record_knobs(report& r, const std::vector<knob>& ks, const std::vector<exchange>& what,
                         const knob_samples& s) {
  for (std::size_t e = 0; e < what.size(); ++e)
    for (std::size_t k = 0; k < ks.size(); ++k) {
      const std::string name = what[e].name + " / " + ks[k].name;
      r.value(name + ": CPU per round trip", field(s[k][e], &cost::cpu_us), "us");
      r.value(name + ": latency p50", field(s[k][e], &cost::p50_us), "us");
      r.value(name + ": latency p99", field(s[k][e], &cost::p99_us), "us");
      r.value(name + ": CPU vs " + ks[0].name,
              ratios(field(s[k][e], &cost::cpu_us), field(s[0][e], &cost::cpu_us)), "ratio");
    }
}

inline int compare_knobs(const std::vector<knob>& ks, const std::vector<exchange>& what,
                         int rounds, long n, const std::string& json, const run_fn& run) {
  const std::string start = utc_now() + ", load " + loadavg();
  const auto samples = sample_knobs(ks, what, rounds, n, run);
  report r("bench_message --knobs");
  r.note("started", start);
  r.note("ended", utc_now() + ", load " + loadavg());
  r.note("machine", cores_note());
  r.note("runs", std::to_string(rounds) + " rounds x " + std::to_string(n) +
                     " round trips per exchange, settings interleaved");
  record_knobs(r, ks, what, samples);
  r.write_json(json);
  std::cout << "== bench_message --knobs ==\n  started: " << start << "\n  ended: " << utc_now()
            << ", load " << loadavg() << "\n  " << cores_note() << "; " << rounds << " rounds x "
            << n << " round trips per exchange, each setting a fresh pair of processes\n";
  print_knob_table(std::cout, ks, what, samples);
  return 0;
}

}  // namespace downpour::bench
