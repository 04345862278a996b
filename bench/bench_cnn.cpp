// The CNN (model/cnn.hpp) trained in one plain loop on one thread with
// Downpour's update rule: plain SGD with lr = base * 0.99^(step/600), batch
// 100, L2 1e-4, the EMA with decay min(0.99, (1+step)/(10+step)); prints the
// validation and test accuracy of the parameters and of the EMA as it goes.
// Finds the settings of the `--model cnn` job; --time measures ms/step.
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
#include <random>
#include <string>
#include <vector>

#include "bench/bench_common.hpp"
#include "data/batcher.hpp"
#include "data/idx.hpp"
#include "model/cnn.hpp"
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

// tf.truncated_normal_initializer per variable (redraw beyond 2 stddev), zeros for biases.
std::vector<float> initial_parameters(const cnn_shape& s, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<float> p;
  for (const auto& v : s.variables())
    for (std::size_t i = 0; i < v.rows * v.cols; ++i) {
      double x = 0.0;
      if (v.init.kind == init_kind::truncated_normal) do
          x = normal(rng);
        while (std::abs(x) > 2.0);
      p.push_back(static_cast<float>(x * v.init.stddev));
    }
  return p;
}

// Examples start..start+n of set, scaled to [0,1] as the batcher does.
batch examples(const image_set& set, std::size_t start, std::size_t n) {
  batch b;
  b.size = n;
  b.input_size = set.input_size();
  for (std::size_t i = 0; i < n * b.input_size; ++i)
    b.x.push_back(static_cast<float>(set.pixels[start * b.input_size + i]) * (1.0f / 255.0f));
  for (std::size_t i = 0; i < n; ++i) b.y.push_back(set.labels[start + i]);
  return b;
}

// Accuracy of params on a whole set, 100 images at a time.
double accuracy(basic_cnn_workspace<float>& ws, const std::vector<float>& params,
                const image_set& set, std::size_t classes) {
  std::size_t correct = 0;
  for (std::size_t start = 0; start < set.count; start += 100) {
    const batch b = examples(set, start, std::min<std::size_t>(100, set.count - start));
    const float* logits = ws.scores(params.data(), b);
    for (std::size_t i = 0; i < b.size; ++i) {
      const float* row = logits + i * classes;
      const auto best = static_cast<std::size_t>(std::max_element(row, row + classes) - row);
      correct += static_cast<std::int32_t>(best) == b.y[i];
    }
  }
  return static_cast<double>(correct) / static_cast<double>(set.count);
}

void time_steps(basic_cnn_workspace<float>& ws, std::vector<float>& params, batcher& batches,
                int n) {
  std::vector<float> grad(params.size());
  std::vector<double> ms;
  for (int i = 0; i < n; ++i) {
    const batch& b = batches.next_batch();
    ms.push_back(1e3 * cpu_time_of([&] { ws.loss_and_gradient(params.data(), b, grad.data()); }));
  }
  const auto s = bench::summarize(ms);
  std::printf("loss_and_gradient, batch 100, one thread: median %.2f CPU ms (min %.2f, max %.2f) over %d steps\n",
              s.median, s.min, s.max, n);
}

}  // namespace

int main(int argc, char** argv) {
  auto args = parse(argc, argv);
  const auto data = load_mnist(args["--data-dir"], 5000);
  cnn_shape s;
  s.height = data->train.rows;
  s.width = data->train.cols;
  s.classes = data->num_classes;
  s.kernel = std::stoul(args["--kernel"]);
  const std::string filters = args["--filters"];
  s.filters1 = std::stoul(filters.substr(0, filters.find(',')));
  s.filters2 = std::stoul(filters.substr(filters.find(',') + 1));
  const float l2 = std::stof(args["--l2"]);
  const std::uint64_t seed = std::stoull(args["--seed"]);
  basic_cnn_workspace<float> ws(s, 100, l2);
  std::vector<float> params = initial_parameters(s, seed), ema = params, grad(params.size());
  batcher batches(data, data->train, 100, seed);
  std::printf("cnn %s: %zu parameters, initial loss %.4f (first 100 validation examples)\n",
              s.to_string().c_str(), params.size(),
              ws.loss(params.data(), examples(data->validation, 0, 100)));
  if (const int n = std::stoi(args["--time"]); n > 0) {
    time_steps(ws, params, batches, n);
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
      loss_sum += ws.loss_and_gradient(params.data(), batches.next_batch(), grad.data());
      sgd_into(params.data(), params.data(), grad.data(), grad.size(),
               learning_rate_at(schedule, step));
      update_ema(ema.data(), params.data(), ema.size(), ema_decay_at(0.99f, step));
    });
    if ((step + 1) % every == 0 || step + 1 == last) {
      std::printf(
          "step %5ld  train %6.1f CPU s  wall %6.1f s  loss %.4f  validation %.4f ema %.4f  test %.4f ema %.4f\n",
          step + 1, train_cpu_s, bench::now_s() - began, loss_sum / static_cast<double>(since),
          accuracy(ws, params, data->validation, s.classes),
          accuracy(ws, ema, data->validation, s.classes),
          accuracy(ws, params, data->test, s.classes), accuracy(ws, ema, data->test, s.classes));
      std::fflush(stdout);
      loss_sum = 0.0;
      since = 0;
    }
  }
  return 0;
}
