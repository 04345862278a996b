// The MLP and softmax regression as models (model/model.hpp).
#include <stdexcept>
#include <utility>

#include "model/mlp.hpp"

namespace downpour {
namespace {

mlp_spec spec_for(const std::vector<std::size_t>& hidden, const model_request& r,
                  const std::string& kind) {
  const std::size_t input = r.data.features();
  if (r.data.dims.empty() || input == 0)
    throw std::invalid_argument(kind + ": the data's examples have no features");
  if (r.classes == 0) throw std::invalid_argument(kind + ": the data has no classes");
  for (std::size_t h : hidden)
    if (h == 0) throw std::invalid_argument(kind + ": a hidden layer of 0 units");
  return mlp_spec{input, hidden, r.classes};
}

}  // namespace

std::shared_ptr<const model> mlp_model_of(const std::string& kind, const mlp_spec& spec, float l2) {
  return network_model(spec.layout(kind), spec.classes, [spec] { return mlp_network<float>(spec); },
                       {l2, 0});
}

std::shared_ptr<const model> make_mlp(const std::vector<std::size_t>& hidden,
                                      const model_request& request) {
  if (hidden.empty())
    throw std::invalid_argument(
        "mlp: at least one hidden layer is needed (--model softmax "
        "has none)");
  return mlp_model_of("mlp", spec_for(hidden, request, "mlp"), request.l2);
}

std::shared_ptr<const model> make_softmax(const model_request& request) {
  return mlp_model_of("softmax", spec_for({}, request, "softmax"), request.l2);
}

}  // namespace downpour
