// A torch::nn::Sequential trained by Downpour: the whole downpour command
// line (every role, mode, checkpoint, eval, inspect, export) with the seed's
// MLP written in LibTorch (mlp_network.hpp). README.md runs it as 2 ps + 2 workers.
#include <memory>

#include <runtime/cli/app.hpp>

#include "mlp_network.hpp"

int main(int argc, char** argv) {
  return downpour::run_downpour(argc, argv, [](const downpour::model_request& request) {
    return downpour::make_torch_model(torch_mlp::spec_for(request));
  });
}
