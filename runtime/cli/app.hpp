// Downpour as a library: a program that hands its own model to run_downpour
// gets every role, option, mode, checkpoint and command of `downpour`
// (examples/custom_model). `downpour` itself is run_downpour with the
// built-in models (--model mlp|softmax|cnn).
#pragma once

#include "model/model.hpp"
#include "runtime/cli/model_factory.hpp"

namespace downpour {

// The whole command line of `downpour` with the given model; returns the
// process exit code (docs/stopping.md).
int run_downpour(int argc, char** argv, const model_factory& make_model);

}  // namespace downpour
