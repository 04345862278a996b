// The defaults of model_workspace's sparse calls: a dense model touches no
// rows, so the calls with rows are the dense ones.
#include "model/model.hpp"

namespace downpour {

const char* to_string(prediction p) {
  switch (p) {
    case prediction::classes:
      return "classes";
    case prediction::probability:
      return "probability";
    case prediction::value:
      return "value";
  }
  return "classes";
}

const std::vector<std::uint64_t>& model_workspace::touched_rows(const batch& /*b*/) {
  static const std::vector<std::uint64_t> none;
  return none;
}

float model_workspace::loss_and_gradient(const float* params, const float* /*rows*/, const batch& b,
                                         float* grad, float* /*row_grad*/) {
  return loss_and_gradient(params, b, grad);
}

const float* model_workspace::scores(const float* params, const float* /*rows*/, const batch& b) {
  return scores(params, b);
}

}  // namespace downpour
