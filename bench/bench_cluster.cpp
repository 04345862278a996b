// The runtime's overhead, side by side in one run with the same data and seed:
// the reference trainer, the cluster in one process (inproc) and as real
// processes on loopback, with 1 worker + 1 shard and 2 workers + 2 shards.
// ms/step = wall_s / global steps from each run's summary (init and final
// evaluation excluded); medians over repeats, with min and max.
// With --tls-certs=DIR (made by scripts/make-certs DIR 127.0.0.1) the 2 + 2
// process cluster also runs over mutual TLS, and its cost is shown. With
// --peer=torch_ps.py (../shared/peers, python3-torch) PyTorch's RPC
// parameter server runs interleaved with 1 and 2 workers, beside 1 ps + 2
// worker processes and 1 ps + 1 worker process of 2 trainers.
#include <sys/resource.h>
#include <unistd.h>

#include <sstream>
#include <thread>

#include "bench/bench_common.hpp"
#include "bench/bench_process.hpp"
#include "bench/rpc_peer.hpp"
#include "runtime/node/reference_trainer.hpp"
#include "test/support/test_jobs.hpp"

using namespace downpour;
using namespace downpour::bench;
using downpour::testing::temp_dir;

namespace {

struct sample {
  double wall_s = 0, steps = 0;
  double cpu_s = 0;  // user + system of every process (or thread) of the run, start to exit
  double ms_per_step() const { return steps > 0 ? 1e3 * wall_s / steps : 0; }
  double cpu_ms_per_step() const { return steps > 0 ? 1e3 * cpu_s / steps : 0; }
  double steps_per_s() const { return wall_s > 0 ? steps / wall_s : 0; }
};

options job_options(std::size_t ps, std::size_t workers, long steps, const std::string& dir) {
  options o;
  o.last_step = steps;
  o.quiet = true;
  o.log_threshold = log_level::warn;  // no per-run INFO lines between the rows
  o.log_every = 1000000;
  o.save_checkpoint_secs = 0;
  o.checkpoint_dir = dir;
  o.ps_hosts.assign(ps, host_port{"127.0.0.1", 0});
  o.worker_hosts.assign(workers, host_port{"127.0.0.1", 0});
  return o;
}

double own_cpu_s() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * t.tv_usec; };
  return s(u.ru_utime) + s(u.ru_stime);
}

sample reference_run(const job_model& job, long steps) {
  temp_dir dir("bench-ref");
  std::ostringstream log;
  const double cpu0 = own_cpu_s();
  auto r = run_reference(job_options(1, 1, steps, dir.str()), job, log);
  return {r.summary.wall_s, static_cast<double>(r.summary.global_step), own_cpu_s() - cpu0};
}

// A variant of the default job: pipelined pulls off, or bf16 on the wire.
struct variant {
  bool pipeline = true;
  wire_dtype wire = wire_dtype::fp32;
  std::string tls_certs;  // mutual TLS with the certificates in this directory
  std::size_t ps_replicas = 1;  // copies of each shard
};

sample inproc_run(std::size_t n, long steps, variant v = {}) {
  temp_dir dir("bench-inproc");
  auto o = job_options(n, n, steps, dir.str());
  o.pipeline = v.pipeline;
  o.ps_replicas = v.ps_replicas;
  auto r = downpour::testing::run_local_job(o);
  if (!r) throw std::runtime_error("inproc run failed: " + describe(r.error()));
  return {r->summary.wall_s, static_cast<double>(r->summary.global_step)};
}

// n ps processes and n worker processes (the chief last), as a real cluster,
// over mutual TLS with the certificates in v.tls_certs when it is not empty.
sample process_run(const std::string& bin, std::size_t n, long steps, variant v = {}) {
  temp_dir dir("bench-proc");
  std::vector<std::string> args{"--quiet", "--log-every=1000000", "--save-checkpoint-secs=0",
                                "--last-step=" + std::to_string(steps),
                                std::string("--pipeline=") + (v.pipeline ? "on" : "off"),
                                "--wire-dtype=" + to_string(v.wire),
                                "--ps-replicas=" + std::to_string(v.ps_replicas)};
  if (!v.tls_certs.empty())
    args.insert(args.end(), {"--tls-ca=" + v.tls_certs + "/ca.pem",
                             "--tls-cert=" + v.tls_certs + "/127.0.0.1.pem",
                             "--tls-key=" + v.tls_certs + "/127.0.0.1.key"});
  auto run = run_cluster(bin, n, n, args, dir);
  auto s = read_summary(dir);
  return {s.wall_s, s.steps, run.cpu_s};
}

// 1 ps and `workers` worker processes, with `trainers` trainers in each.
sample one_ps_run(const std::string& bin, std::size_t workers, std::size_t trainers, long steps) {
  temp_dir dir("bench-one-ps");
  std::vector<std::string> args{"--quiet", "--log-every=1000000", "--save-checkpoint-secs=0",
                                "--last-step=" + std::to_string(steps),
                                "--trainers=" + std::to_string(trainers)};
  auto run = run_cluster(bin, 1, workers, args, dir);
  auto s = read_summary(dir);
  return {s.wall_s, s.steps, run.cpu_s};
}

std::string peer_arg(const std::vector<std::string>& rest) {
  for (auto& a : rest)
    if (a.rfind("--peer=", 0) == 0) return std::filesystem::absolute(a.substr(7)).string();
  return "";
}

// --ps-replicas=R: the 2+2 jobs (inproc, processes) again with R copies of each shard.
std::size_t ps_replicas_arg(const std::vector<std::string>& rest) {
  for (auto& a : rest)
    if (a.rfind("--ps-replicas=", 0) == 0) return std::stoul(a.substr(14));
  return 1;
}

std::string tls_certs_dir(const std::vector<std::string>& rest) {
  for (auto& a : rest)
    if (a.rfind("--tls-certs=", 0) == 0) return std::filesystem::absolute(a.substr(12)).string();
  return "";
}

struct series {
  std::vector<sample> ref, local1, proc1, local2, proc2, proc2_tls;
  std::vector<sample> local2_replicated, proc2_replicated;  // --ps-replicas R > 1
  std::vector<sample> local1_off, proc1_off, proc1_bf16;  // variants of the 1+1 job
  // --peer: the RPC peer with 1 and 2 workers beside 1 ps + 2 worker
  // processes and 1 ps + 1 worker process of 2 trainers.
  std::vector<double> peer1, peer2;
  std::vector<sample> one_ps_two, one_ps_trainers;
};

void peer_repeat(series& s, const std::string& bin, const std::string& peer, long steps) {
  s.peer1.push_back(rpc_peer_steps_per_s(peer, 1, steps));
  s.one_ps_two.push_back(one_ps_run(bin, 2, 1, steps));
  s.peer2.push_back(rpc_peer_steps_per_s(peer, 2, steps));
  s.one_ps_trainers.push_back(one_ps_run(bin, 1, 2, steps));
}

void one_repeat(series& s, const job_model& job, const std::string& bin, long steps,
                const std::string& tls_certs, std::size_t replicas) {
  s.ref.push_back(reference_run(job, steps));
  s.local1.push_back(inproc_run(1, steps));
  s.local1_off.push_back(inproc_run(1, steps, variant{false, wire_dtype::fp32, {}}));
  if (!bin.empty()) {
    s.proc1.push_back(process_run(bin, 1, steps));
    s.proc1_off.push_back(process_run(bin, 1, steps, variant{false, wire_dtype::fp32, {}}));
    s.proc1_bf16.push_back(process_run(bin, 1, steps, variant{true, wire_dtype::bf16, {}}));
  }
  s.local2.push_back(inproc_run(2, steps));
  if (replicas > 1) {
    variant v;
    v.ps_replicas = replicas;
    s.local2_replicated.push_back(inproc_run(2, steps, v));
  }
  if (!bin.empty()) s.proc2.push_back(process_run(bin, 2, steps));
  if (!bin.empty() && replicas > 1) {
    variant v;
    v.ps_replicas = replicas;
    s.proc2_replicated.push_back(process_run(bin, 2, steps, v));
  }
  if (!bin.empty() && !tls_certs.empty())
    s.proc2_tls.push_back(process_run(bin, 2, steps, variant{true, wire_dtype::fp32, tls_certs}));
}

std::vector<double> ms(const std::vector<sample>& xs) {
  std::vector<double> out;
  for (auto& x : xs) out.push_back(x.ms_per_step());
  return out;
}

std::vector<double> cpu_ms(const std::vector<sample>& xs) {
  std::vector<double> out;
  for (auto& x : xs) out.push_back(x.cpu_ms_per_step());
  return out;
}

std::vector<double> rate(const std::vector<sample>& xs) {
  std::vector<double> out;
  for (auto& x : xs) out.push_back(x.steps_per_s());
  return out;
}

// What the CPU the process clusters burn allows on this machine's cores at
// best. The reference is one thread, so its CPU beyond its training wall time
// is start-up and final evaluation; that much is taken off per worker process
// (each loads the data), leaving an estimate of the CPU per training step.
void cpu_bound_rows(report& rep, const series& s) {
  const double cores = std::max(1u, std::thread::hardware_concurrency());
  std::vector<double> ref_cpu, cpu1, cpu2, floor1, ceiling2;
  for (std::size_t i = 0; i < s.ref.size(); ++i) {
    const auto &r = s.ref[i], &p1 = s.proc1[i], &p2 = s.proc2[i];
    const double overhead_s = std::max(0.0, r.cpu_s - r.wall_s);
    ref_cpu.push_back(r.cpu_ms_per_step());
    cpu1.push_back(1e3 * (p1.cpu_s - overhead_s) / p1.steps);
    cpu2.push_back(1e3 * (p2.cpu_s - 2 * overhead_s) / p2.steps);
    floor1.push_back(cpu1.back() / cores / r.ms_per_step());
    // 2+2 steps/s at best, over 1+1 steps/s if 1+1 met its 1.35x target.
    ceiling2.push_back(cores / cpu2.back() * 1.35 * r.ms_per_step());
  }
  rep.value("reference CPU ms/step (whole run)", ref_cpu, "CPU ms/global step");
  rep.value("processes 1+1 CPU ms/training step", cpu1, "CPU ms/global step, all processes");
  rep.value("processes 2+2 CPU ms/training step", cpu2, "CPU ms/global step, all processes");
  rep.value("processes 1+1 / reference at best (CPU / cores)", floor1, "x");
  rep.value("processes 2+2 / 1+1 at best, 1+1 at 1.35x", ceiling2, "x");
}

// Issue 39's dense targets against PyTorch's RPC parameter server.
void peer_rows(report& rep, const series& s) {
  rep.value("RPC peer N=1 steps/s", s.peer1, "global steps/s");
  rep.value("RPC peer N=2 steps/s", s.peer2, "global steps/s");
  rep.value("1 ps + 2 worker processes steps/s", rate(s.one_ps_two), "global steps/s");
  rep.value("1 ps + 1 worker process of 2 trainers steps/s", rate(s.one_ps_trainers),
            "global steps/s");
  rep.ratio("processes 1+1 / RPC peer N=1 (steps/s)", ratios(rate(s.proc1), s.peer1), 4.0, false);
  rep.ratio("1 ps + 2 workers / RPC peer N=2 (steps/s)", ratios(rate(s.one_ps_two), s.peer2), 3.5,
            false);
  rep.ratio("2 trainers in 1 process / 2 worker processes (steps/s)",
            ratios(rate(s.one_ps_trainers), rate(s.one_ps_two)), 1.0, false);
}

void fill_report(report& rep, const series& s) {
  const std::pair<const char*, const std::vector<sample>*> rows[] = {
      {"reference trainer", &s.ref},
      {"inproc 1 worker + 1 shard, pipeline on (default)", &s.local1},
      {"inproc 1 worker + 1 shard, pipeline off (TF's order)", &s.local1_off},
      {"2 processes 1 worker + 1 ps, pipeline on (default)", &s.proc1},
      {"2 processes 1 worker + 1 ps, pipeline off (TF's order)", &s.proc1_off},
      {"2 processes 1+1, bf16 wire", &s.proc1_bf16},
      {"inproc 2 workers + 2 shards", &s.local2},
      {"inproc 2 workers + 2 shards, --ps-replicas", &s.local2_replicated},
      {"4 processes 2 workers + 2 ps", &s.proc2},
      {"4 processes 2 workers + 2 ps, --ps-replicas", &s.proc2_replicated},
      {"4 processes 2 workers + 2 ps, mutual TLS", &s.proc2_tls}};
  for (auto& [name, xs] : rows)
    if (!xs->empty()) rep.value(std::string(name) + " ms/step", ms(*xs), "ms/global step");
  for (auto& [name, xs] : rows)
    if (!xs->empty()) rep.value(std::string(name) + " steps/s", rate(*xs), "global steps/s");
  // Pipelined pulls add a step of staleness, so both rows are held to the target.
  rep.ratio("inproc 1+1 pipeline on / reference (ms/step)", ratios(ms(s.local1), ms(s.ref)),
            1.10, true);
  rep.ratio("inproc 1+1 pipeline off / reference (ms/step)", ratios(ms(s.local1_off), ms(s.ref)),
            1.10, true);
  if (!s.proc1.empty()) {
    rep.ratio("processes 1+1 pipeline on / reference (ms/step)", ratios(ms(s.proc1), ms(s.ref)),
              1.35, true);
    rep.ratio("processes 1+1 pipeline off / reference (ms/step)",
              ratios(ms(s.proc1_off), ms(s.ref)), 1.35, true);
    rep.value("processes 1+1 bf16 / reference", ratios(ms(s.proc1_bf16), ms(s.ref)), "x");
  }
  rep.ratio("inproc 2+2 / inproc 1+1 (steps/s)", ratios(rate(s.local2), rate(s.local1)), 1.7,
            false);
  if (!s.local2_replicated.empty())
    rep.ratio("inproc 2+2 --ps-replicas / --ps-replicas 1 (steps/s)",
              ratios(rate(s.local2_replicated), rate(s.local2)), 0.7, false);
  if (!s.proc2.empty()) {
    rep.ratio("processes 2+2 / processes 1+1 (steps/s)", ratios(rate(s.proc2), rate(s.proc1)),
              1.4, false);
    rep.value("processes 2+2 / inproc 1+1 (steps/s)", ratios(rate(s.proc2), rate(s.local1)), "x");
  }
  if (!s.proc2_replicated.empty()) {
    rep.ratio("processes 2+2 --ps-replicas / --ps-replicas 1 (CPU s/step)",
              ratios(cpu_ms(s.proc2_replicated), cpu_ms(s.proc2)), 1.6, true);
    rep.value("processes 2+2 --ps-replicas / --ps-replicas 1 (steps/s)",
              ratios(rate(s.proc2_replicated), rate(s.proc2)), "x");
  }
  if (!s.proc1.empty() && !s.proc2.empty()) cpu_bound_rows(rep, s);
  if (!s.peer1.empty()) peer_rows(rep, s);
  if (!s.proc2_tls.empty())
    rep.value("processes 2+2 TLS / plaintext (steps/s)", ratios(rate(s.proc2_tls), rate(s.proc2)),
              "x");
}

}  // namespace

int main(int argc, char** argv) {
  cli args(argc, argv, "bench-results.json");
  const int repeats = args.repeats > 0 ? args.repeats : 5;  // the VM's run-to-run spread is wide
  const long steps = args.steps > 0 ? args.steps : 2000;
  const std::string bin = find_binary(args.rest);
  const std::string tls_certs = tls_certs_dir(args.rest);
  const std::size_t replicas = ps_replicas_arg(args.rest);
  const std::string peer = peer_arg(args.rest);
  if (bin.empty()) std::cerr << "no downpour binary (--binary=, DOWNPOUR_BINARY): no process rows\n";
  const job_model job = downpour::testing::job_for(options{});
  std::string load_note = "start " + loadavg();
  series s;
  try {
    one_repeat(s, job, bin, 100, tls_certs, replicas);  // warm-up: page in binary, data and allocator
    s = series{};
    for (int r = 0; r < repeats; ++r) {
      one_repeat(s, job, bin, steps, tls_certs, replicas);
      if (!peer.empty() && !bin.empty()) peer_repeat(s, bin, peer, steps);
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
                      " repeats, batch 100, 784-500-10, seed 1, async, fashion-mnist; " +
                      "pipelined pulls and fp32 wire unless a row says otherwise");
  rep.note("binary", bin.empty() ? "none" : bin);
  rep.note("TLS", tls_certs.empty() ? "not run (--tls-certs=DIR)" : "certificates in " + tls_certs);
  rep.note("PyTorch RPC peer", peer.empty() ? "not run (--peer=../shared/peers/torch_ps.py)" : peer);
  fill_report(rep, s);
  rep.print(std::cout);
  rep.write_json(args.json);
  return 0;
}
