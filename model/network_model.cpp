#include "model/network_model.hpp"

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "model/network_workspace.hpp"

namespace downpour {
namespace {

std::string shape_text(const std::string& name, std::uint64_t rows, std::size_t cols) {
  return name + " [" + std::to_string(rows) + "x" + std::to_string(cols) + "]";
}

// Why the network's variables are not the layout's dense ones; empty if they are.
std::string mismatch(const std::vector<variable_spec>& network, const model_layout& layout) {
  const std::vector<variable_info>& declared = layout.variables();
  for (std::size_t i = 0; i < network.size(); ++i) {
    const variable_spec& n = network[i];
    const std::string has = shape_text(n.name, n.rows, n.cols);
    if (i == declared.size()) return "the network's " + has + " is not declared";
    const variable_info& d = declared[i];
    if (d.name != n.name || d.rows != n.rows || d.cols != n.cols)
      return "variable " + std::to_string(i + 1) + " of the network is " + has +
             ", of the layout " + shape_text(d.name, d.rows, d.cols) +
             " (expected the network's variables in its order)";
  }
  if (declared.size() > network.size())
    return "the layout declares " + declared[network.size()].name + ", which the network has not";
  if (!layout.row_variables().empty())
    return "the row variable " + layout.row_variables().front().name +
           " (a network of layers has dense variables only)";
  return {};
}

class sequential_model final : public model {
 public:
  sequential_model(model_layout layout, std::size_t classes, network_factory network,
                   network_options options)
      : layout_(std::move(layout)),
        classes_(classes),
        network_(std::move(network)),
        options_(options) {
    const layers::sequential<float> net = network_();
    if (const std::string why = mismatch(net.variables(""), layout_); !why.empty())
      throw std::invalid_argument(layout_.kind() + ": " + why);
    if (net.output_width() != classes_)
      throw std::invalid_argument(layout_.kind() + ": the network gives " +
                                  std::to_string(net.output_width()) + " outputs for " +
                                  std::to_string(classes_) + " classes");
  }

  model_layout layout() const override { return layout_; }
  std::size_t classes() const override { return classes_; }
  std::unique_ptr<model_workspace> workspace(std::size_t batch_size) const override {
    return std::make_unique<workspace_adapter<network_workspace<float>>>(
        network_(), layout_, classes_, batch_size, options_.l2, options_.chunk_rows);
  }

 private:
  model_layout layout_;
  std::size_t classes_;
  network_factory network_;
  network_options options_;
};

}  // namespace

std::shared_ptr<const model> network_model(model_layout layout, std::size_t classes,
                                           network_factory network, network_options options) {
  if (!network) throw std::invalid_argument(layout.kind() + ": no network");
  return std::make_shared<sequential_model>(std::move(layout), classes, std::move(network),
                                            options);
}

}  // namespace downpour
