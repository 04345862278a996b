// The families of what a node's actors count (reporting/meters.hpp) and the
// standard process_* metrics of Prometheus' client libraries, read from /proc.
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime/net/metrics_text.hpp"

namespace downpour {
namespace {

std::string label(const char* name, std::size_t k) {
  return std::string(name) + "=\"" + std::to_string(k) + "\"";
}

template <class Meters, class Value>
void per_meter(exposition& e, const Meters& all, const char* key, const std::string& name,
               const char* type, const std::string& help, Value value) {
  e.family(name, type, help);
  for (const auto& [k, m] : all) e.sample(name, label(key, k), value(*m));
}

void worker_metrics(exposition& e, const node_meters& meters) {
  const auto workers = meters.workers();
  if (workers.empty()) return;
  per_meter(e, workers, "worker", "downpour_worker_steps_total", "counter",
            "gradients this worker pushed",
            [](const worker_meter& m) { return static_cast<double>(m.steps.load()); });
  per_meter(e, workers, "worker", "downpour_worker_compute_seconds_total", "counter",
            "seconds of forward and backward passes",
            [](const worker_meter& m) { return m.compute_seconds.get(); });
  per_meter(e, workers, "worker", "downpour_worker_input_seconds_total", "counter",
            "seconds taking the next batch",
            [](const worker_meter& m) { return m.input_seconds.get(); });
  per_meter(e, workers, "worker", "downpour_worker_wait_seconds_total", "counter",
            "seconds of steps spent waiting: pulls, tickets, barriers",
            [](const worker_meter& m) { return m.wait_seconds.get(); });
  e.family("downpour_worker_step_duration_seconds", "histogram",
           "seconds from one push of this worker to its next");
  for (const auto& [k, m] : workers)
    e.histogram_samples("downpour_worker_step_duration_seconds", label("worker", k),
                        m->step_seconds.read());
}

void shard_meter_metrics(exposition& e, const node_meters& meters) {
  const auto shards = meters.shards();
  if (shards.empty()) return;
  e.family("downpour_shard_gradient_staleness_steps", "histogram",
           "async, ssp: global steps a gradient's parameters were behind the shard when applied");
  for (const auto& [k, m] : shards)
    e.histogram_samples("downpour_shard_gradient_staleness_steps", label("shard", k),
                        m->staleness_steps.read());
  e.family("downpour_shard_round_wait_seconds", "histogram",
           "sync: seconds from a round's first gradient to its last");
  for (const auto& [k, m] : shards)
    e.histogram_samples("downpour_shard_round_wait_seconds", label("shard", k),
                        m->round_wait_seconds.read());
}

// A model with a sparse variable: each shard's rows served and taken (the
// rows held: downpour_shard_sparse_rows).
void shard_row_metrics(exposition& e, const node_meters& meters) {
  const auto shards = meters.shards();
  if (shards.empty()) return;
  const auto count = [](const std::atomic<std::uint64_t>& n) {
    return static_cast<double>(n.load(std::memory_order_relaxed));
  };
  per_meter(e, shards, "shard", "downpour_rows_pulled_total", "counter",
            "rows of the sparse variable this shard answered pulls with",
            [&](const shard_meter& m) { return count(m.rows_pulled); });
  per_meter(e, shards, "shard", "downpour_rows_pushed_total", "counter",
            "rows of the sparse variable's gradients this shard took",
            [&](const shard_meter& m) { return count(m.rows_pushed); });
  e.family("downpour_shard_pull_seconds", "histogram",
           "seconds this shard took to gather the rows of a pull");
  for (const auto& [k, m] : shards)
    e.histogram_samples("downpour_shard_pull_seconds", label("shard", k), m->pull_seconds.read());
  e.family("downpour_shard_push_seconds", "histogram",
           "seconds this shard took to check and take a push with rows");
  for (const auto& [k, m] : shards)
    e.histogram_samples("downpour_shard_push_seconds", label("shard", k), m->push_seconds.read());
}

// Every node: the bytes of messages with tensors or rows it sent and
// received over the network (protocol/wire_bytes.hpp says which bytes).
void wire_metrics(exposition& e, const wire_meter& w) {
  const auto per_peer = [&](const std::string& name, const std::string& help,
                            const auto& counts) {
    e.family(name, "counter", help);
    for (std::size_t k = 0; k < peer_kinds.size(); ++k)
      e.sample(name, std::string("peer=\"") + peer_kinds[k] + "\"",
               static_cast<double>(counts[k].load(std::memory_order_relaxed)));
  };
  per_peer("downpour_bytes_sent_total",
           "bytes of messages with tensors or rows sent to nodes of this kind", w.sent);
  per_peer("downpour_bytes_received_total",
           "bytes of messages with tensors or rows received from nodes of this kind", w.received);
}

// Only on the node whose saver wrote one (the chief).
void checkpoint_metrics(exposition& e, const checkpoint_meter& c) {
  const auto saves = c.saves.load();
  const auto failures = c.failures.load();
  if (saves == 0 && failures == 0) return;
  e.counter("downpour_checkpoint_saves_total", "checkpoints written", static_cast<double>(saves));
  e.counter("downpour_checkpoint_failures_total",
            "checkpoints not written (a shard did not answer, a write failed, a diverged model)",
            static_cast<double>(failures));
  if (saves == 0) return;
  e.gauge("downpour_checkpoint_duration_seconds",
          "seconds the newest checkpoint took, from asking the shards to the file written",
          c.last_duration_seconds.get());
  e.gauge("downpour_checkpoint_size_bytes", "bytes of the newest checkpoint file",
          static_cast<double>(c.last_size_bytes.load()));
  e.gauge("downpour_checkpoint_last_success_timestamp_seconds",
          "unix time of the newest checkpoint written", c.last_success_unix_seconds.get());
}

// Fields of /proc/self/stat after the command name (field 3 is the first).
std::vector<std::string> proc_stat_fields() {
  std::ifstream in("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  std::vector<std::string> fields;
  const auto close = text.rfind(')');
  if (close == std::string::npos) return fields;
  std::istringstream rest(text.substr(close + 1));
  for (std::string f; rest >> f;) fields.push_back(f);
  return fields;
}

double boot_time() {
  std::ifstream in("/proc/stat");
  for (std::string key; in >> key;) {
    if (key == "btime") {
      double t = 0;
      in >> t;
      return t;
    }
    in.ignore(1 << 20, '\n');
  }
  return 0;
}

}  // namespace

void meter_metrics(exposition& e, const node_meters& meters) {
  worker_metrics(e, meters);
  shard_meter_metrics(e, meters);
  shard_row_metrics(e, meters);
  wire_metrics(e, meters.wire());
  checkpoint_metrics(e, meters.checkpoint());
}

void process_metrics(exposition& e) {
  const auto f = proc_stat_fields();  // f[0] is field 3 (state)
  if (f.size() < 22) return;
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  e.counter("process_cpu_seconds_total", "total user and system CPU time spent in seconds",
            (std::stod(f[11]) + std::stod(f[12])) / ticks);
  e.gauge("process_resident_memory_bytes", "resident memory size in bytes",
          std::stod(f[21]) * page);
  e.gauge("process_virtual_memory_bytes", "virtual memory size in bytes", std::stod(f[20]));
  e.gauge("process_start_time_seconds", "start time of the process since unix epoch in seconds",
          boot_time() + std::stod(f[19]) / ticks);
  std::error_code ec;
  double fds = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    ++fds;
  e.gauge("process_open_fds", "number of open file descriptors", fds);
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0)
    e.gauge("process_max_fds", "maximum number of open file descriptors",
            static_cast<double>(limit.rlim_cur));
  e.gauge("process_threads", "threads of the process", std::stod(f[17]));
}

}  // namespace downpour
