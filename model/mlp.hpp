// The MLP: input -> hidden layers (ReLU) -> classes (logits), softmax
// cross-entropy loss with L2 on the weights; with no hidden layer it is
// softmax regression. Eigen stays behind this header.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "data/batcher.hpp"
#include "model/mlp_spec.hpp"
#include "model/model.hpp"
#include "model/network_model.hpp"
#include "model/network_workspace.hpp"

namespace downpour {

// The MLP's workspace (model/network_workspace.hpp): the layers of
// mlp_network do the calculus, the workspace adds the loss and the L2 term.
template <class Scalar>
class basic_mlp_workspace : public network_workspace<Scalar> {
 public:
  basic_mlp_workspace(const mlp_spec& spec, std::size_t batch_size, Scalar l2);
};

extern template class basic_mlp_workspace<float>;
extern template class basic_mlp_workspace<double>;

using mlp_workspace = basic_mlp_workspace<float>;

// The model of kind ("mlp" or "softmax") for spec: mlp_network as a
// network_model (model/network_model.hpp).
std::shared_ptr<const model> mlp_model_of(const std::string& kind, const mlp_spec& spec, float l2);

// --model mlp: hidden layers of these sizes (at least one) on the request's data.
std::shared_ptr<const model> make_mlp(const std::vector<std::size_t>& hidden,
                                      const model_request& request);

// --model softmax: softmax regression (layer1/weights and layer1/biases).
std::shared_ptr<const model> make_softmax(const model_request& request);

}  // namespace downpour
