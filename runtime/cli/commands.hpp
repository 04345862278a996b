// The commands that work with a saved checkpoint instead of training:
//   downpour eval    [--checkpoint FILE | --checkpoint-dir DIR] [the data and model options]
//   downpour inspect [--checkpoint FILE | --checkpoint-dir DIR]
//   downpour export  [--checkpoint FILE | --checkpoint-dir DIR] --out FILE.npz [--ema]
// Without --checkpoint each takes the newest valid checkpoint in the directory.
// eval builds the job's model for the job's data (--model, --hidden-units,
// the data options), refuses a checkpoint of another model, and prints, last,
//   "eval: global_step=N test_accuracy=A ema_test_accuracy=E"
// formatted as the accuracies of the training's final line.
// inspect and export read the model from the checkpoint alone: export writes
// every variable under its name (the MLP's layer1/weights [in, hidden],
// layer1/biases [hidden], ...); with --ema it writes the moving averages
// under the same names, so that code loading either file needs no change (as
// TensorFlow's ema.variables_to_restore()).
#pragma once

#include <iosfwd>

#include "config/options.hpp"
#include "runtime/cli/model_factory.hpp"

namespace downpour {

// Runs opts.command (eval, inspect or export_npz); eval with the
// application's model, on data its readers may read. Results go to out; an error is one line on err. Returns the exit
// code: 0, 1 on a failure (including a checksum mismatch found by inspect),
// 2 on a usage error (including a model the factory refuses).
int run_command(const options& opts, const application& app, std::ostream& out,
                std::ostream& err);

}  // namespace downpour
