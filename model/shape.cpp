#include "model/shape.hpp"

namespace downpour {

std::vector<variable_info> model_shape::variables() const {
  std::vector<variable_info> vars;
  std::size_t offset = 0;
  auto add = [&](const char* name, std::size_t rows, std::size_t cols, bool regularized) {
    vars.push_back({name, offset, rows, cols, regularized});
    offset += rows * cols;
  };
  add("layer1/weights", input, hidden, true);
  add("layer1/biases", 1, hidden, false);
  add("layer2/weights", hidden, classes, true);
  add("layer2/biases", 1, classes, false);
  return vars;
}

std::size_t model_shape::size() const {
  return input * hidden + hidden + hidden * classes + classes;
}

std::string model_shape::to_string() const {
  return std::to_string(input) + "-" + std::to_string(hidden) + "-" + std::to_string(classes);
}

}  // namespace downpour
