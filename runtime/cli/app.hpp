// Downpour as a library: a program that hands its own model to run_downpour
// gets every role, option, mode, checkpoint and command of `downpour`
// (examples/custom_model), and its own data formats with readers it
// registers (docs/library.md). `downpour` itself is run_downpour with the
// built-in models (--model mlp|softmax|cnn).
#pragma once

#include "model/model.hpp"
#include "runtime/cli/model_factory.hpp"

namespace downpour {

// The whole command line of `downpour` with the program's model and data
// readers; returns the process exit code (docs/stopping.md). A reader named
// as a built-in format (idx, csv, libsvm, criteo) or with an empty name is
// refused: the program exits 2 with one line naming it.
int run_downpour(int argc, char** argv, const application& app);

// The same with the built-in data formats only.
int run_downpour(int argc, char** argv, const model_factory& make_model);

}  // namespace downpour
