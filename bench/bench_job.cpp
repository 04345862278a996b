// The original job as a whole (rows 7 and 8 of the suite): its peak memory,
// and with --full its wall time next to what two cores could do at best.
//
//   bench_job [--steps N] [--repeats N]   peak RSS of the job cut to N global
//                                         steps (default 3000), local and as
//                                         4 processes on loopback
//   bench_job --full [--repeats N]        the whole original job (20000 steps,
//                                         default options): peak RSS and wall
//                                         time, local and as 4 processes, and
//                                         the reference trainer's 20000 steps
//
// Every run is a downpour child process with the job's default options, and
// its peak RSS is wait4()'s ru_maxrss. Linux counts the forking parent's
// resident set in that figure, so this program loads no data and runs nothing
// in-process: its own peak (printed) stays far below what it measures.
#include <sys/resource.h>

#include <algorithm>

#include "bench/bench_common.hpp"
#include "bench/bench_process.hpp"

using namespace downpour;
using namespace downpour::bench;
using downpour::testing::temp_dir;

namespace {

// Wall times follow the machine's load; CPU times (user + system, whole
// processes: start-up, data loading and evaluation included) much less so.
struct series {
  std::vector<double> ref_train, bound, ref_cpu;                      // s (full only)
  std::vector<double> local_train, local_exit, local_cpu, local_rss;  // s, s, s, MB
  std::vector<double> proc_train, proc_exit, proc_cpu;                // s
  std::vector<double> ps_rss, worker_rss, chief_rss, worker1_rss;  // MB
};

std::vector<std::string> steps_args(long steps) {
  if (steps <= 0) return {};  // the original job's own --last-step (20000)
  return {"--last-step=" + std::to_string(steps)};
}

void local_repeat(series& s, const std::string& bin, long steps) {
  temp_dir dir("bench-job-local");
  auto args = steps_args(steps);
  args.insert(args.begin(), "--role=local");
  auto run = run_child(bin, args, dir, "local");
  s.local_train.push_back(read_summary(dir).wall_s);
  s.local_exit.push_back(run.wall_s);
  s.local_cpu.push_back(run.cpu_s);
  s.local_rss.push_back(run.peak_rss_mb);
}

void cluster_repeat(series& s, const std::string& bin, long steps) {
  temp_dir dir("bench-job-procs");
  auto run = run_cluster(bin, 2, 2, steps_args(steps), dir);
  s.proc_train.push_back(read_summary(dir).wall_s);
  s.proc_exit.push_back(run.wall_s);
  s.proc_cpu.push_back(run.cpu_s);
  s.ps_rss.push_back(*std::max_element(run.ps_rss_mb.begin(), run.ps_rss_mb.end()));
  s.worker_rss.push_back(*std::max_element(run.worker_rss_mb.begin(), run.worker_rss_mb.end()));
  s.chief_rss.push_back(run.worker_rss_mb[0]);
  s.worker1_rss.push_back(run.worker_rss_mb[1]);
}

// The reference trainer (one core, no runtime) for the same steps: half its
// training time is what a perfect runtime could reach on two cores.
void reference_repeat(series& s, const std::string& bin, long steps) {
  temp_dir dir("bench-job-ref");
  auto args = steps_args(steps);
  args.insert(args.begin(), "--role=reference");
  auto run = run_child(bin, args, dir, "reference");
  double train = read_summary(dir).wall_s;
  s.ref_train.push_back(train);
  s.ref_cpu.push_back(run.cpu_s);
  s.bound.push_back(train / 2);
}

void memory_rows(report& rep, const series& s) {
  rep.limit("local job (2 ps + 2 workers) peak RSS", s.local_rss, "MB", 200, true);
  rep.limit("ps process peak RSS (larger of 2)", s.ps_rss, "MB", 64, true);
  rep.limit("worker process peak RSS (larger of 2)", s.worker_rss, "MB", 128, true);
  rep.value("  worker 0 (chief) peak RSS", s.chief_rss, "MB");
  rep.value("  worker 1 peak RSS", s.worker1_rss, "MB");
}

void time_rows(report& rep, const series& s) {
  rep.value("reference trainer: training wall", s.ref_train, "s");
  rep.value("2-core bound = reference / 2", s.bound, "s");
  rep.value("local job: training wall (summary)", s.local_train, "s");
  rep.value("local job: process start to exit", s.local_exit, "s");
  rep.value("4 processes: training wall (chief summary)", s.proc_train, "s");
  rep.value("4 processes: first start to last exit", s.proc_exit, "s");
  rep.value("local training wall / 2-core bound", ratios(s.local_train, s.bound), "x");
  rep.value("4 processes training wall / 2-core bound", ratios(s.proc_train, s.bound), "x");
  rep.value("reference trainer: CPU time", s.ref_cpu, "s");
  rep.value("local job: CPU time", s.local_cpu, "s");
  rep.value("4 processes: CPU time (sum)", s.proc_cpu, "s");
  rep.value("local CPU / reference CPU", ratios(s.local_cpu, s.ref_cpu), "x");
  rep.value("4 processes CPU / reference CPU", ratios(s.proc_cpu, s.ref_cpu), "x");
}

double own_peak_rss_mb() {
  struct rusage self {};
  ::getrusage(RUSAGE_SELF, &self);
  return static_cast<double>(self.ru_maxrss) / 1024.0;
}

}  // namespace

int main(int argc, char** argv) {
  cli args(argc, argv, "bench-job.json");
  bool full = std::find(args.rest.begin(), args.rest.end(), "--full") != args.rest.end();
  const int repeats = args.repeats > 0 ? args.repeats : 3;
  // 0: the job's own default (--last-step 20000).
  const long steps = args.steps > 0 ? args.steps : (full ? 0 : 3000);
  const std::string bin = find_binary(args.rest);
  if (bin.empty()) {
    std::cerr << "bench_job: no downpour binary (--binary=PATH or DOWNPOUR_BINARY)\n";
    return 1;
  }
  std::string load_note = "start " + loadavg();
  series s;
  try {
    local_repeat(s, bin, 100);  // warm-up: page in the binary and the data
    s = series{};
    for (int r = 0; r < repeats; ++r) {
      if (full) reference_repeat(s, bin, steps);
      local_repeat(s, bin, steps);
      cluster_repeat(s, bin, steps);
      std::cerr << "bench_job: repeat " << r + 1 << "/" << repeats << " done\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "bench_job: " << e.what() << "\n";
    return 1;
  }
  load_note += ", end " + loadavg();
  report rep(full ? "bench_job --full" : "bench_job");
  rep.note("cores", cores_note());
  rep.note("loadavg", load_note);
  rep.note("CAF", caf_settings());
  rep.note("job", (steps > 0 ? std::to_string(steps) : std::string("20000")) +
                      " global steps x " + std::to_string(repeats) +
                      " repeats, default options (2 ps, 2 workers, async, batch 100)");
  rep.note("bench's own peak RSS", fixed(own_peak_rss_mb(), 1) + " MB");
  memory_rows(rep, s);
  if (full) time_rows(rep, s);
  rep.print(std::cout);
  rep.write_json(args.json);
  return 0;
}
