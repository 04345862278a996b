// The models `downpour` is built with, chosen by name (--model).
#pragma once

#include <memory>

#include "model/model.hpp"

namespace downpour {

// mlp (choice.hidden_units, at least one layer), softmax, cnn, or on sparse
// data logreg and fm (choice.sparse_rows, choice.fm_factors) on the request's
// data. Throws std::invalid_argument with one line naming an unknown or
// not-built model, or a request the model cannot take.
std::shared_ptr<const model> make_builtin_model(const model_choice& choice,
                                                const model_request& request);

}  // namespace downpour
