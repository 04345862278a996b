#include "model/builtin.hpp"

#include <stdexcept>

#include "model/cnn.hpp"
#include "model/ctr_models.hpp"
#include "model/mlp.hpp"
#include "model/sparse_models.hpp"

namespace downpour {

std::shared_ptr<const model> make_builtin_model(const model_choice& choice,
                                                const model_request& request) {
  if (choice.name == "mlp") return make_mlp(choice.hidden_units, request);
  if (choice.name == "softmax") return make_softmax(request);
  if (choice.name == "cnn") return make_cnn(request);
  if (choice.name == "logreg") return make_logreg(choice, request);
  if (choice.name == "fm") return make_fm(choice, request);
  if (choice.name == "dlrm") return make_dlrm(choice, request);
  if (choice.name == "wide_deep") return make_wide_deep(choice, request);
  throw std::invalid_argument("--model=" + choice.name +
                              " is not a built-in model (expected mlp, "
                              "softmax, cnn, logreg, fm, dlrm or wide_deep)");
}

}  // namespace downpour
