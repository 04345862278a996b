// One training step of the model (batch 100, 784-500-10, through the model
// interface as a worker runs it) against the same matrix products alone,
// single-threaded, plus the reference trainer's step.
//
// FLOPs counted per step (the matrix products only, B = batch size):
//   forward   2*B*(784*500 + 500*10)            X*W1, H*W2
//   backward  2*B*500*10*2 + 2*B*784*500         H^T*dL, dL*W2^T, X^T*dH
//   total     2*B*(2*784*500 + 3*500*10) = 159.8 MFLOP for B = 100
// GCC 12 warns inside its own AVX-512 intrinsics when Eigen uses them (as in model/).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <Eigen/Dense>
#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <sstream>

#include "bench/bench_common.hpp"
#include "config/options.hpp"
#include "data/batcher.hpp"
#include "model/init.hpp"
#include "model/mlp.hpp"
#include "model/schedule.hpp"
#include "model/update.hpp"
#include "runtime/node/job.hpp"
#include "runtime/node/reference_trainer.hpp"
#include "test/support/test_jobs.hpp"

using namespace downpour;
using namespace downpour::bench;

namespace {

using matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

constexpr std::size_t kBatch = 100, kIn = 784, kHidden = 500, kOut = 10;

double flops_per_step() {
  double b = kBatch;
  return 2 * b * (kIn * kHidden + kHidden * kOut) + 2 * b * kHidden * kOut * 2 +
         2 * b * kIn * kHidden;
}

// A handful of distinct batches, so the step reads fresh inputs like training does.
std::vector<batch> make_batches(const std::optional<job_model>& job, std::size_t n) {
  std::vector<batch> out;
  if (job) {
    batcher b(job->data.train, kBatch, 1);
    for (std::size_t i = 0; i < n; ++i) out.push_back(b.next_batch());
    return out;
  }
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> px(0.0f, 1.0f);
  std::uniform_int_distribution<int> label(0, kOut - 1);
  for (std::size_t i = 0; i < n; ++i) {
    batch b;
    b.size = kBatch;
    b.input_size = kIn;
    b.x.resize(kBatch * kIn);
    b.y.resize(kBatch);
    for (auto& v : b.x) v = px(rng);
    for (auto& y : b.y) y = label(rng);
    out.push_back(std::move(b));
  }
  return out;
}

// The five products of a step on row-major matrices of the step's sizes.
struct gemms {
  matrix x = matrix::Random(kBatch, kIn), w1 = matrix::Random(kIn, kHidden),
         h = matrix::Random(kBatch, kHidden), w2 = matrix::Random(kHidden, kOut),
         logits = matrix(kBatch, kOut), dl = matrix::Random(kBatch, kOut),
         dh = matrix(kBatch, kHidden), gw1 = matrix(kIn, kHidden), gw2 = matrix(kHidden, kOut);
  void once() {
    h.noalias() = x * w1;
    logits.noalias() = h * w2;
    gw2.noalias() = h.transpose() * dl;
    dh.noalias() = dl * w2.transpose();
    gw1.noalias() = x.transpose() * dh;
  }
};

struct step_bench {
  std::shared_ptr<const model> net =
      make_mlp({kHidden}, model_request{data_shape{{28, 28, 1}}, kOut, 1e-4f, {}});
  std::vector<float> params = initial_parameters(net->layout(), 1);
  std::vector<float> ema = params;
  std::vector<float> grad = std::vector<float>(params.size());
  std::unique_ptr<model_workspace> ws = net->workspace(kBatch);
  std::vector<batch> batches;
  gemms g;
  volatile float sink = 0;

  double model_ms(long steps) {
    double s = time_s([&] {
      for (long i = 0; i < steps; ++i)
        sink = ws->loss_and_gradient(params.data(), batches[i % batches.size()], grad.data());
    });
    return 1e3 * s / steps;
  }
  double gemm_ms(long steps) {
    double s = time_s([&] {
      for (long i = 0; i < steps; ++i) g.once();
    });
    sink = g.gw1(0, 0);
    return 1e3 * s / steps;
  }
  // sgd_into + update_ema over the whole model: the rest of a reference step.
  double update_ms(long steps) {
    double s = time_s([&] {
      for (long i = 0; i < steps; ++i) {
        sgd_into(params.data(), params.data(), grad.data(), grad.size(), 1e-9f);
        update_ema(ema.data(), params.data(), ema.size(), 0.99f);
      }
    });
    return 1e3 * s / steps;
  }
  // What the cluster adds per step outside the model, for attribution: a
  // fresh zeroed 397,510-float vector filled by memcpy (gather() of a push,
  // and similarly a pull reply's copy), and a std::isfinite scan (a shard's
  // check of each pushed gradient).
  double fresh_copy_ms(long steps) {
    double s = time_s([&] {
      for (long i = 0; i < steps; ++i) {
        std::vector<float> part(grad.size());
        std::memcpy(part.data(), grad.data(), grad.size() * sizeof(float));
        sink = part[i % part.size()];
      }
    });
    return 1e3 * s / steps;
  }
  double finite_scan_ms(long steps) {
    double s = time_s([&] {
      for (long i = 0; i < steps; ++i) {
        bool ok = true;
        for (float x : grad)
          if (!std::isfinite(x)) { ok = false; break; }
        sink = ok;
      }
    });
    return 1e3 * s / steps;
  }
};

struct series {
  std::vector<double> model, gemm, update, copy, scan, ref, gflops, gemm_gflops;
};

double reference_ms(const job_model& job, long steps) {
  options o;
  o.last_step = steps;
  o.log_every = 1000000;
  o.quiet = true;
  std::ostringstream log;
  auto r = run_reference(o, job, log);
  return 1e3 * r.summary.wall_s / steps;
}

std::optional<job_model> try_load() {
  try {
    return downpour::testing::job_for(options{});
  } catch (const std::exception& e) {
    std::cerr << "no data set (" << e.what() << "): random batches, no reference row\n";
    return std::nullopt;
  }
}

void one_repeat(step_bench& b, const job_model* data, long steps, series& s) {
  s.model.push_back(b.model_ms(steps));
  s.gemm.push_back(b.gemm_ms(steps));
  s.update.push_back(b.update_ms(steps));
  s.copy.push_back(b.fresh_copy_ms(steps));
  s.scan.push_back(b.finite_scan_ms(steps));
  if (data) s.ref.push_back(reference_ms(*data, steps));
  s.gflops.push_back(flops_per_step() / (s.model.back() * 1e-3) / 1e9);
  s.gemm_gflops.push_back(flops_per_step() / (s.gemm.back() * 1e-3) / 1e9);
}

void fill_report(report& rep, const series& s) {
  rep.note("flops/step", "2B(784*500+500*10) + 2B*500*10*2 + 2B*784*500 = " +
                             fixed(flops_per_step() / 1e6, 1) + " MFLOP");
  rep.value("model step (loss_and_gradient)", s.model, "ms/step");
  rep.value("model step GFLOP/s", s.gflops, "GFLOP/s");
  rep.value("GEMMs alone (5 products)", s.gemm, "ms/step");
  rep.value("GEMMs alone GFLOP/s", s.gemm_gflops, "GFLOP/s");
  rep.value("sgd_into + update_ema (397,510 floats)", s.update, "ms/step");
  rep.value("fresh vector(397,510) + memcpy", s.copy, "ms/step");
  rep.value("std::isfinite scan of 397,510 floats", s.scan, "ms/step");
  if (!s.ref.empty()) rep.value("reference trainer step", s.ref, "ms/step");
  rep.ratio("step/GEMMs ratio", ratios(s.model, s.gemm), 1.5, true);
  if (!s.ref.empty()) rep.value("reference step / model step", ratios(s.ref, s.model), "x");
}

}  // namespace

int main(int argc, char** argv) {
  cli args(argc, argv, "bench-step.json");
  const int repeats = args.repeats > 0 ? args.repeats : 5;
  const long steps = args.steps > 0 ? args.steps : 200;
  Eigen::setNbThreads(1);
  std::string load_note = "start " + loadavg();
  auto data = try_load();
  step_bench b;
  b.batches = make_batches(data, 20);
  series s;
  one_repeat(b, nullptr, 20, s);  // warm caches and clocks, discarded
  s = series{};
  for (int r = 0; r < repeats; ++r) one_repeat(b, data ? &*data : nullptr, steps, s);
  load_note += ", end " + loadavg();
  report rep("bench_step");
  rep.note("cores", cores_note());
  rep.note("loadavg", load_note);
  rep.note("threads", "1 (Eigen::setNbThreads(1); Eigen " + std::to_string(EIGEN_WORLD_VERSION) +
                          "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
                          std::to_string(EIGEN_MINOR_VERSION) + ")");
  rep.note("data", data ? std::string("fashion-mnist, 20 real batches") : "random batches");
  rep.note("shape", "batch 100, 784-500-10, " + std::to_string(steps) + " steps x " +
                        std::to_string(repeats) + " repeats");
  fill_report(rep, s);
  rep.print(std::cout);
  rep.write_json(args.json);
  return 0;
}
