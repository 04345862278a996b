// What a node's actors count as they work, for its /metrics endpoint
// (runtime/net/metrics_text.hpp): relaxed atomics that an actor bumps and the
// endpoint's own thread reads, so a scrape never waits for an actor and an
// actor never waits for a scrape. One node_meters per node (its actor
// system's config holds it: protocol/metered_config.hpp).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace downpour {

// A double that several threads add to.
class atomic_real {
 public:
  void add(double x);
  void set(double x) { value_.store(x, std::memory_order_relaxed); }
  double get() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

// A Prometheus histogram: counts of observations at most each upper bound
// (cumulative when read), their sum and their count.
class histogram_meter {
 public:
  explicit histogram_meter(std::vector<double> bounds);
  void observe(double x);
  struct reading {
    std::vector<double> bounds;
    std::vector<std::uint64_t> cumulative;  // one per bound, then +Inf
    double sum = 0.0;
    std::uint64_t count = 0;
  };
  reading read() const;

 private:
  std::vector<double> bounds_;
  std::vector<std::atomic<std::uint64_t>> counts_;  // per bucket, +Inf last
  atomic_real sum_;
};

// A worker: its steps and where their time went.
struct worker_meter {
  std::atomic<std::uint64_t> steps{0};  // gradients pushed
  atomic_real compute_seconds;          // forward and backward passes
  atomic_real input_seconds;            // taking the next batch
  atomic_real wait_seconds;             // the rest of a step: pulls, tickets, barriers
  histogram_meter step_seconds{
      {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}};
};

// A parameter shard: how stale the gradients it applies are (async, ssp),
// how long a sync round waits from its first gradient to its last; with a
// sparse variable the rows it served and took, and the time it took to
// gather a pull's rows and to take a push.
struct shard_meter {
  histogram_meter staleness_steps{{0, 1, 2, 3, 4, 8, 16, 32, 64, 128}};
  histogram_meter round_wait_seconds{
      {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}};
  std::atomic<std::uint64_t> rows_pulled{0};
  std::atomic<std::uint64_t> rows_pushed{0};
  histogram_meter pull_seconds{
      {0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.1, 1}};
  histogram_meter push_seconds{
      {0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.1, 1}};
};

// The chief's checkpoint saver.
struct checkpoint_meter {
  std::atomic<std::uint64_t> saves{0};
  std::atomic<std::uint64_t> failures{0};
  atomic_real last_duration_seconds;
  std::atomic<std::uint64_t> last_size_bytes{0};
  atomic_real last_success_unix_seconds;  // 0: none yet
};

// The kinds of node a message with tensors or rows crosses between: a
// shard's ps, and a worker or the chief at the other end.
enum class peer_kind : std::size_t { ps, worker, chief };
inline constexpr std::array<const char*, 3> peer_kinds = {"ps", "worker", "chief"};

// The bytes of those messages this node sent and received over the network,
// by the kind of node at the other end (protocol/wire_bytes.hpp).
struct wire_meter {
  std::array<std::atomic<std::uint64_t>, peer_kinds.size()> sent{};
  std::array<std::atomic<std::uint64_t>, peer_kinds.size()> received{};
};

class node_meters {
 public:
  // Created on first use; they live as long as the node.
  worker_meter& worker(std::size_t index);
  shard_meter& shard(std::size_t index);
  checkpoint_meter& checkpoint() { return checkpoint_; }
  const checkpoint_meter& checkpoint() const { return checkpoint_; }
  wire_meter& wire() { return wire_; }
  const wire_meter& wire() const { return wire_; }
  // Whether a shard of this node has a meter: the node is a shard's ps.
  bool holds_shards() const;

  std::vector<std::pair<std::size_t, const worker_meter*>> workers() const;
  std::vector<std::pair<std::size_t, const shard_meter*>> shards() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::size_t, std::unique_ptr<worker_meter>> workers_;
  std::map<std::size_t, std::unique_ptr<shard_meter>> shards_;
  checkpoint_meter checkpoint_;
  wire_meter wire_;
};

}  // namespace downpour
