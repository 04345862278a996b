#include "model/mlp.hpp"

namespace downpour {

template <class T>
basic_mlp_workspace<T>::basic_mlp_workspace(const mlp_spec& spec, std::size_t batch_size, T l2)
    : network_workspace<T>(mlp_network<T>(spec), spec.layout("mlp"), spec.classes, batch_size,
                           l2, 0) {}

template class basic_mlp_workspace<float>;
template class basic_mlp_workspace<double>;

}  // namespace downpour
