// What a program hands to run_downpour (runtime/cli/app.hpp): how to build
// its model for the job's data, and readers of its own data formats.
#pragma once

#include <functional>
#include <memory>

#include "data/data_reader.hpp"
#include "model/model.hpp"

namespace downpour {

// Builds the job's model for its data; called once per node, on every node
// (a ps needs the layout, a worker the loss). Throw std::invalid_argument
// with a one-line message for a data set the model cannot take.
using model_factory = std::function<std::shared_ptr<const model>(const model_request&)>;

// A program built on Downpour: its model, and the readers of its own data
// formats by name (--data-format=NAME; none: the built-in formats only).
struct application {
  model_factory make_model;
  data_readers readers;
};

}  // namespace downpour
