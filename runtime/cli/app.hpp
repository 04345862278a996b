// Downpour as a library: a program that hands its own model to run_downpour
// gets every role, option, mode, checkpoint and command of `downpour`
// (examples/custom_model). `downpour` itself is run_downpour with the
// built-in models (--model mlp|softmax|cnn).
#pragma once

#include <functional>
#include <memory>

#include "model/model.hpp"

namespace downpour {

// Builds the job's model for its data; called once per node, on every node
// (a ps needs the layout, a worker the loss). Throw std::invalid_argument
// with a one-line message for a data set the model cannot take.
using model_factory = std::function<std::shared_ptr<const model>(const model_request&)>;

// The whole command line of `downpour` with the given model; returns the
// process exit code (docs/stopping.md).
int run_downpour(int argc, char** argv, const model_factory& make_model);

}  // namespace downpour
