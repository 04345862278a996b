// A LibTorch module whose embedding rows live on Downpour's parameter
// servers (embedding_network.hpp): each worker pulls only the rows its batch
// touches and pushes their gradient back as rows. README.md runs it.
#include <memory>

#include <runtime/cli/app.hpp>

#include "embedding_network.hpp"

int main(int argc, char** argv) {
  return downpour::run_downpour(argc, argv, [](const downpour::model_request& request) {
    return downpour::make_torch_model(torch_embedding::spec_for(request));
  });
}
