// The CNN (model/cnn.hpp) trained in one plain loop on one thread with
// Downpour's update rule: plain SGD with lr = base * 0.99^(step/600), batch
// 100, L2 1e-4, the EMA with decay min(0.99, (1+step)/(10+step)); prints the
// validation and test accuracy of the parameters and of the EMA as it goes.
// The model, its initial parameters and the accuracy are the job's own
// (make_cnn, initial_parameters, evaluate). One worker without staleness: a
// quick way to compare shapes and learning rates; the job's settings
// (examples/cnn.ini) were measured on the job itself, whose two asynchronous
// workers diverge at rates this loop takes. --time N measures ms/step of
// the cnn and of the hand-written passes it replaced, side by side.
//
//   bench_cnn [--learning-rate 0.05] [--last-step 3000] [--eval-every 500]
//             [--seed 1] [--data-dir DIR] [--filters 8,32] [--kernel 5] [--time N]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "bench/bench_common.hpp"
#include "bench/support/handwritten_cnn.hpp"
#include "data/batcher.hpp"
#include "data/idx.hpp"
#include "model/cnn.hpp"
#include "model/init.hpp"
#include "model/model.hpp"
#include "model/schedule.hpp"
#include "model/update.hpp"

using namespace downpour;

namespace {

// CPU seconds this process has run: on a machine shared with other jobs the
// wall clock also counts the time the scheduler gave to them.
double cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

double cpu_time_of(const std::function<void()>& fn) {
  const double t0 = cpu_s();
  fn();
  return cpu_s() - t0;
}

std::map<std::string, std::string> parse(int argc, char** argv) {
  std::map<std::string, std::string> args = {
      {"--learning-rate", "0.05"}, {"--last-step", "3000"}, {"--eval-every", "500"},
      {"--seed", "1"},        {"--data-dir", "/usr/share/datasets/fashion-mnist"},
      {"--filters", "8,32"}, {"--kernel", "5"}, {"--time", "0"}, {"--l2", "1e-4"}};
  for (int i = 1; i < argc; i += 2) {
    if (!args.count(argv[i]) || i + 1 >= argc) {
      std::cerr << "bench_cnn: unknown option or missing value: " << argv[i] << "\n";
      std::exit(2);
    }
    args[argv[i]] = argv[i + 1];
  }
  return args;
}

// The cnn composed from layers against the hand-written passes it replaced
// (bench/support/handwritten_cnn.hpp), step by step on the same batches,
// alternating so that both see the same load on a shared machine.
void time_steps(model_workspace& ws, handwritten_cnn<float>& written,
                const std::vector<float>& params, batcher& batches, int n) {
  std::vector<float> grad(params.size());
  std::vector<double> layered_ms, written_ms;
  for (int i = 0; i < n; ++i) {
    const batch& b = batches.next_batch();
    written_ms.push_back(
        1e3 * cpu_time_of([&] { written.loss_and_gradient(params.data(), b, grad.data()); }));
    layered_ms.push_back(
        1e3 * cpu_time_of([&] { ws.loss_and_gradient(params.data(), b, grad.data()); }));
  }
  const auto l = bench::summarize(layered_ms), w = bench::summarize(written_ms);
  std::printf("loss_and_gradient, batch 100, one thread, median CPU ms over %d steps:\n", n);
  std::printf("  hand-written passes %.2f (min %.2f)  layers %.2f (min %.2f)  layers/hand-written %.3f\n",
              w.median, w.min, l.median, l.min, l.median / w.median);
}

// The shape --filters and --kernel ask for, on the data's images.
cnn_shape shape_of(std::map<std::string, std::string>& args, const data_splits& data) {
  cnn_shape s;
  s.height = data.shape.dims.at(0);
  s.width = data.shape.dims.at(1);
  s.channels = data.shape.dims.at(2);
  s.classes = data.classes;
  s.kernel = std::stoul(args["--kernel"]);
  const std::string filters = args["--filters"];
  s.filters1 = std::stoul(filters.substr(0, filters.find(',')));
  s.filters2 = std::stoul(filters.substr(filters.find(',') + 1));
  return s;
}

double accuracy(const model& m, const std::vector<float>& params, const dataset& set) {
  return evaluate(m, params.data(), set).overall;
}

}  // namespace

int main(int argc, char** argv) {
  auto args = parse(argc, argv);
  const data_splits data = load_mnist(args["--data-dir"], 5000);
  const cnn_shape s = shape_of(args, data);
  const auto m = make_cnn(s, std::stof(args["--l2"]));
  const std::uint64_t seed = std::stoull(args["--seed"]);
  const auto ws = m->workspace(100);
  std::vector<float> params = initial_parameters(m->layout(), seed), ema = params,
                     grad(params.size());
  batcher batches(data.train, 100, seed);
  std::printf("cnn %s: %zu parameters, initial loss %.4f (100 validation examples)\n",
              s.to_string().c_str(), params.size(),
              ws->loss(params.data(), batcher(data.validation, 100, seed).next_batch()));
  if (const int n = std::stoi(args["--time"]); n > 0) {
    handwritten_cnn<float> written(s, 100, std::stof(args["--l2"]));
    time_steps(*ws, written, params, batches, n);
    return 0;
  }
  const lr_schedule schedule{std::stof(args["--learning-rate"]), 0.99f, 600, false};
  const long last = std::stol(args["--last-step"]), every = std::stol(args["--eval-every"]);
  double train_cpu_s = 0.0, loss_sum = 0.0;
  const double began = bench::now_s();
  long since = 0;  // steps in loss_sum
  for (long step = 0; step < last; ++step) {
    train_cpu_s += cpu_time_of([&] {
      ++since;
      loss_sum += ws->loss_and_gradient(params.data(), batches.next_batch(), grad.data());
      sgd_into(params.data(), params.data(), grad.data(), grad.size(),
               learning_rate_at(schedule, step));
      update_ema(ema.data(), params.data(), ema.size(), ema_decay_at(0.99f, step));
    });
    if ((step + 1) % every == 0 || step + 1 == last) {
      std::printf(
          "step %5ld  train %6.1f CPU s  wall %6.1f s  loss %.4f  validation %.4f ema %.4f  test %.4f ema %.4f\n",
          step + 1, train_cpu_s, bench::now_s() - began, loss_sum / static_cast<double>(since),
          accuracy(*m, params, *data.validation), accuracy(*m, ema, *data.validation),
          accuracy(*m, params, *data.test), accuracy(*m, ema, *data.test));
      std::fflush(stdout);
      loss_sum = 0.0;
      since = 0;
    }
  }
  return 0;
}
