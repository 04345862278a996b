// The LibTorch adapter's speed, side by side (docs/torch.md): the seed's MLP
// as a torch::nn::Sequential (examples/torch_mlp/) trained
//   - by plain LibTorch in one process (SGD with the job's decay and L2),
//   - by Downpour, 1 ps + 1 worker and 2 ps + 2 workers in one process,
//   - by PyTorch's RPC parameter server with 2 workers (--peer: its script),
// printing steps/s per worker and the ratios against the targets (>= 0.8x
// plain LibTorch, >= 3x the RPC peer). Repeats interleave the runs.
//   bench_torch [--steps N] [--repeats R] [--peer torch_ps.py]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "bench/rpc_peer.hpp"
#include "data/batcher.hpp"
#include "data/idx.hpp"
#include "model/schedule.hpp"
#include "runtime/cli/model_build.hpp"
#include "runtime/node/node.hpp"
#include "torch_mlp/mlp_network.hpp"

using namespace downpour;

namespace {

struct settings {
  std::int64_t steps = 3000;
  int repeats = 3;
  std::string peer;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The loop a LibTorch user writes: forward, backward, SGD with L2 on the weights.
double plain_libtorch(const data_splits& data, std::int64_t steps) {
  torch::set_num_threads(1);
  auto net = torch_mlp::make_sequential(784, 500, 10);
  batcher batches(data.train, 100, 1);
  std::vector<std::int64_t> labels(100);
  const auto t0 = std::chrono::steady_clock::now();
  for (std::int64_t step = 0; step < steps; ++step) {
    const batch& b = batches.next_batch();
    std::copy(b.y.begin(), b.y.end(), labels.begin());
    auto x = torch::from_blob(const_cast<float*>(b.x.data()), {100, 784});
    auto y = torch::from_blob(labels.data(), {100}, torch::kInt64);
    net->zero_grad();
    torch::nn::functional::cross_entropy(net->forward(x), y).backward();
    torch::NoGradGuard no_grad;
    const float lr = learning_rate_at(lr_schedule{}, step);
    for (auto& p : net->parameters()) {
      if (p.dim() >= 2) p.grad().add_(p, 1e-4);
      p.add_(p.grad(), -lr);
    }
  }
  return static_cast<double>(steps) / seconds_since(t0);
}

// steps/s per worker of Downpour's job, ps shards and workers in this process.
double downpour_job(std::size_t ps, std::size_t workers, std::int64_t steps) {
  options o;
  o.last_step = steps;
  o.ps_hosts.assign(ps, host_port{"127.0.0.1", 0});
  o.worker_hosts.assign(workers, host_port{"127.0.0.1", 0});
  o.quiet = true;
  o.log_every = 1000000;
  o.save_checkpoint_secs = 0;
  o.checkpoint_dir = "bench_torch_ckpt";
  std::filesystem::remove_all(o.checkpoint_dir);
  const job_model job = build_job_model(o, load_job_data(o), [](const model_request& r) {
    return make_torch_model(torch_mlp::spec_for(r));
  });
  const auto result = run_local(o, job);
  std::filesystem::remove_all(o.checkpoint_dir);
  if (!result) throw std::runtime_error("bench_torch: the Downpour job failed");
  return result->summary.steps_per_s / static_cast<double>(workers);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return 0.0;
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The median of per-repeat ratios a[i] / b[i]: runs of one repeat are side
// by side, so pairing them cancels part of the machine's drift.
double paired_ratio(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> r;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) r.push_back(b[i] > 0 ? a[i] / b[i] : 0);
  return median(r);
}

settings parse(int argc, char** argv) {
  settings s;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    if (key == "--steps") s.steps = std::stoll(argv[i + 1]);
    else if (key == "--repeats") s.repeats = std::stoi(argv[i + 1]);
    else if (key == "--peer") s.peer = argv[i + 1];
    else throw std::invalid_argument("bench_torch: unknown option " + key);
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  const settings s = parse(argc, argv);
  const data_splits data = load_mnist(DOWNPOUR_DEFAULT_DATA_DIR, 5000);
  std::vector<double> plain, one, two, peer;
  for (int r = 0; r < s.repeats; ++r) {
    plain.push_back(plain_libtorch(data, s.steps));
    one.push_back(downpour_job(1, 1, s.steps));
    two.push_back(downpour_job(2, 2, s.steps));
    if (!s.peer.empty()) peer.push_back(downpour::bench::rpc_peer_steps_per_s(s.peer, 2, s.steps));
    std::printf("repeat %d: plain %.1f, 1ps+1w %.1f, 2ps+2w %.1f per worker%s\n", r + 1,
                plain.back(), one.back(), two.back(),
                peer.empty() ? "" : (", rpc peer " + std::to_string(peer.back()) + " global").c_str());
  }
  std::printf("\n%-44s %10s %8s %8s\n", "steps/s (median of repeats)", "value", "ratio", "target");
  std::printf("%-44s %10.1f\n", "plain LibTorch, one process", median(plain));
  std::printf("%-44s %10.1f %7.2fx %8s\n", "Downpour 1 ps + 1 worker, per worker", median(one),
              paired_ratio(one, plain), ">=0.8x");
  std::printf("%-44s %10.1f %7.2fx %8s\n", "Downpour 2 ps + 2 workers, per worker", median(two),
              paired_ratio(two, plain), "");
  std::vector<double> two_global;
  for (double x : two) two_global.push_back(2 * x);
  if (!peer.empty())
    std::printf("%-44s %10.1f %7.2fx %8s\n", "PyTorch RPC ps, 2 workers (global) vs Downpour",
                median(peer), paired_ratio(two_global, peer), ">=3x");
  else
    std::printf("PyTorch RPC peer: not run (--peer torch_ps.py, with python3-torch)\n");
  return 0;
}
