// The commands that work with a saved checkpoint instead of training:
//   downpour eval    [--checkpoint FILE | --checkpoint-dir DIR] [--data-dir DIR]
//   downpour inspect [--checkpoint FILE | --checkpoint-dir DIR]
//   downpour export  [--checkpoint FILE | --checkpoint-dir DIR] --out FILE.npz [--ema]
// Without --checkpoint each takes the newest valid checkpoint in the directory.
// eval uses the checkpoint's own shape (not --hidden-units) and prints, last,
//   "eval: global_step=N test_accuracy=A ema_test_accuracy=E"
// formatted as the accuracies of the training's final line.
// export writes layer1/weights [in, hidden], layer1/biases [hidden],
// layer2/weights [hidden, classes], layer2/biases [classes]; with --ema it
// writes the moving averages under the same names, so that code loading
// either file needs no change (as TensorFlow's ema.variables_to_restore()).
#pragma once

#include <iosfwd>

#include "config/options.hpp"

namespace downpour {

// Runs opts.command (eval, inspect or export_npz). Results go to out; an error
// is one line on err. Returns the exit code: 0, 1 on a failure (including a
// checksum mismatch found by inspect), 2 on a usage error.
int run_command(const options& opts, std::ostream& out, std::ostream& err);

}  // namespace downpour
