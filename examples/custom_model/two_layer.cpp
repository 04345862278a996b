// A model of your own, trained by Downpour: one hidden layer (ReLU) and a
// softmax output on the numeric features of a CSV file. The program declares
// the variables and writes the forward structure from model/layers; the
// layers do the calculus, network_model adds the softmax cross-entropy, and
// Downpour does the rest: parameter servers, every mode, checkpoints, eval.
#include <model/layers/activations.hpp>
#include <model/layers/dense.hpp>
#include <model/network_model.hpp>
#include <runtime/cli/app.hpp>
#include <stdexcept>
#include <string>

namespace {

using namespace downpour;

constexpr std::size_t hidden = 32;

// Each dense layer's variables are "scope/weights" and "scope/biases".
layers::sequential<float> two_layer(std::size_t in, std::size_t classes) {
  layers::sequential<float> net(in);
  net.add("hidden", layers::dense<float>(in, hidden));
  net.add(layers::relu<float>(hidden));
  net.add("output", layers::dense<float>(hidden, classes));
  return net;
}

std::shared_ptr<const model> make_two_layer(const model_request& r) {
  const std::size_t in = r.data.features(), classes = r.classes;
  if (in == 0 || classes < 2)
    throw std::invalid_argument("two_layer needs at least 1 feature and 2 classes, the data has " +
                                std::to_string(in) + " and " + std::to_string(classes));
  // The layers' variables, in their order: weights drawn truncated normal
  // with the job's --l2 as their regularizer, biases zero.
  const initializer weights{init_kind::truncated_normal, 0.1f};
  const regularizer l2{.l2 = r.l2};
  const std::string shape =
      std::to_string(in) + "-" + std::to_string(hidden) + "-" + std::to_string(classes);
  model_layout layout(
      "two_layer", shape,
      {{.name = "hidden/weights", .rows = in, .cols = hidden, .init = weights, .reg = l2},
       {.name = "hidden/biases", .rows = 1, .cols = hidden},
       {.name = "output/weights", .rows = hidden, .cols = classes, .init = weights, .reg = l2},
       {.name = "output/biases", .rows = 1, .cols = classes}});
  return network_model(layout, classes, [in, classes] { return two_layer(in, classes); });
}

}  // namespace

int main(int argc, char** argv) {
  return downpour::run_downpour(argc, argv, make_two_layer);
}
