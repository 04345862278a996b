// The runtime's overhead, side by side in one run with the same data and seed:
// the reference trainer, the cluster in one process (inproc) and as real
// processes on loopback, with 1 worker + 1 shard and 2 workers + 2 shards.
// ms/step = wall_s / global steps from each run's summary (init and final
// evaluation excluded); medians over repeats, with min and max.
#include <unistd.h>

#include <sstream>

#include "bench/bench_common.hpp"
#include "bench/bench_process.hpp"
#include "data/idx.hpp"
#include "runtime/reference_trainer.hpp"

using namespace downpour;
using namespace downpour::bench;
using downpour::testing::temp_dir;

namespace {

struct sample {
  double wall_s = 0, steps = 0;
  double ms_per_step() const { return steps > 0 ? 1e3 * wall_s / steps : 0; }
  double steps_per_s() const { return wall_s > 0 ? steps / wall_s : 0; }
};

options job_options(std::size_t ps, std::size_t workers, long steps, const std::string& dir) {
  options o;
  o.last_step = steps;
  o.quiet = true;
  o.log_every = 1000000;
  o.save_checkpoint_secs = 0;
  o.checkpoint_dir = dir;
  o.ps_hosts.assign(ps, host_port{"127.0.0.1", 0});
  o.worker_hosts.assign(workers, host_port{"127.0.0.1", 0});
  return o;
}

sample reference_run(const mnist_data& data, long steps) {
  temp_dir dir("bench-ref");
  std::ostringstream log;
  auto r = run_reference(job_options(1, 1, steps, dir.str()), data, log);
  return {r.summary.wall_s, static_cast<double>(r.summary.global_step)};
}

sample inproc_run(std::size_t n, long steps) {
  temp_dir dir("bench-inproc");
  auto r = run_local(job_options(n, n, steps, dir.str()));
  if (!r) throw std::runtime_error("inproc run failed: " + describe(r.error()));
  return {r->summary.wall_s, static_cast<double>(r->summary.global_step)};
}

// n ps processes and n worker processes (the chief last), as a real cluster.
sample process_run(const std::string& bin, std::size_t n, long steps) {
  temp_dir dir("bench-proc");
  run_cluster(bin, n, n,
              {"--quiet", "--log-every=1000000", "--save-checkpoint-secs=0",
               "--last-step=" + std::to_string(steps)},
              dir);
  auto s = read_summary(dir);
  return {s.wall_s, s.steps};
}

struct series {
  std::vector<sample> ref, local1, proc1, local2, proc2;
};

void one_repeat(series& s, const mnist_data& data, const std::string& bin, long steps) {
  s.ref.push_back(reference_run(data, steps));
  s.local1.push_back(inproc_run(1, steps));
  if (!bin.empty()) s.proc1.push_back(process_run(bin, 1, steps));
  s.local2.push_back(inproc_run(2, steps));
  if (!bin.empty()) s.proc2.push_back(process_run(bin, 2, steps));
}

std::vector<double> ms(const std::vector<sample>& xs) {
  std::vector<double> out;
  for (auto& x : xs) out.push_back(x.ms_per_step());
  return out;
}

std::vector<double> rate(const std::vector<sample>& xs) {
  std::vector<double> out;
  for (auto& x : xs) out.push_back(x.steps_per_s());
  return out;
}

void fill_report(report& rep, const series& s) {
  const std::pair<const char*, const std::vector<sample>*> rows[] = {
      {"reference trainer", &s.ref},        {"inproc 1 worker + 1 shard", &s.local1},
      {"2 processes 1 worker + 1 ps", &s.proc1}, {"inproc 2 workers + 2 shards", &s.local2},
      {"4 processes 2 workers + 2 ps", &s.proc2}};
  for (auto& [name, xs] : rows)
    if (!xs->empty()) rep.value(std::string(name) + " ms/step", ms(*xs), "ms/global step");
  for (auto& [name, xs] : rows)
    if (!xs->empty()) rep.value(std::string(name) + " steps/s", rate(*xs), "global steps/s");
  rep.ratio("inproc 1+1 / reference (ms/step)", ratios(ms(s.local1), ms(s.ref)), 1.10, true);
  if (!s.proc1.empty())
    rep.ratio("processes 1+1 / reference (ms/step)", ratios(ms(s.proc1), ms(s.ref)), 1.35, true);
  rep.ratio("inproc 2+2 / inproc 1+1 (steps/s)", ratios(rate(s.local2), rate(s.local1)), 1.7,
            false);
  if (!s.proc2.empty()) {
    rep.ratio("processes 2+2 / processes 1+1 (steps/s)", ratios(rate(s.proc2), rate(s.proc1)),
              1.4, false);
    rep.value("processes 2+2 / inproc 1+1 (steps/s)", ratios(rate(s.proc2), rate(s.local1)), "x");
  }
}

}  // namespace

int main(int argc, char** argv) {
  cli args(argc, argv, "bench-results.json");
  const int repeats = args.repeats > 0 ? args.repeats : 3;
  const long steps = args.steps > 0 ? args.steps : 2000;
  const std::string bin = find_binary(args.rest);
  if (bin.empty()) std::cerr << "no downpour binary (--binary=, DOWNPOUR_BINARY): no process rows\n";
  auto data = load_mnist(DOWNPOUR_DEFAULT_DATA_DIR, 5000);
  std::string load_note = "start " + loadavg();
  series s;
  try {
    one_repeat(s, *data, bin, 100);  // warm-up: page in binary, data and allocator
    s = series{};
    for (int r = 0; r < repeats; ++r) {
      one_repeat(s, *data, bin, steps);
      std::cerr << "repeat " << r + 1 << "/" << repeats << " done\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "bench_cluster: " << e.what() << "\n";
    return 1;
  }
  load_note += ", end " + loadavg();
  report rep("bench_cluster");
  rep.note("cores", cores_note());
  rep.note("loadavg", load_note);
  rep.note("CAF", caf_settings());
  rep.note("job", std::to_string(steps) + " global steps x " + std::to_string(repeats) +
                      " repeats, batch 100, 784-500-10, seed 1, async, fashion-mnist");
  rep.note("binary", bin.empty() ? "none" : bin);
  fill_report(rep, s);
  rep.print(std::cout);
  rep.write_json(args.json);
  return 0;
}
