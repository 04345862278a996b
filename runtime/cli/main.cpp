// downpour: one binary for every role, with the built-in models (--model).
#include "model/builtin.hpp"
#include "runtime/cli/app.hpp"

int main(int argc, char** argv) {
  return downpour::run_downpour(argc, argv, [](const downpour::model_request& request) {
    return downpour::make_builtin_model(request.choice, request);
  });
}
