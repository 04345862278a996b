#include "bench/support/ctr_trainer.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "data/example_stream.hpp"
#include "model/init.hpp"
#include "model/row_update.hpp"

namespace downpour {

ctr_trainer::ctr_trainer(std::shared_ptr<const model> net, const ctr_trainer_settings& settings)
    : net_(std::move(net)),
      settings_(settings),
      layout_(net_->layout()),
      rows_(row_tables_of(layout_, settings.seed)) {
  if (layout_.row_variables().empty())
    throw std::invalid_argument("ctr trainer: model " + layout_.to_string() +
                                " has no row variables");
  if (settings.batch_size == 0) throw std::invalid_argument("ctr trainer: batch size 0");
  if (!std::isfinite(settings.learning_rate) || settings.learning_rate <= 0)
    throw std::invalid_argument("ctr trainer: learning rate " +
                                std::to_string(settings.learning_rate) +
                                " (expected a finite number above 0)");
  workspace_ = net_->workspace(settings.batch_size);
  params_ = initial_parameters(layout_, settings.seed);
  grad_.resize(params_.size());
  for (const variable_info& v : layout_.variables()) {
    slot_offsets_.push_back(dense_slots_.size());
    dense_slots_.resize(dense_slots_.size() + slots_of(v.update.rule) * v.size());
    fill_initial_slots(v.update, dense_slots_.data() + slot_offsets_.back(), v.size());
  }
}

float ctr_trainer::step(const batch& b) {
  row_grad_.keys = workspace_->touched_rows(b);
  const std::vector<float> values = rows_.pull(row_grad_.keys);
  row_grad_.values.resize(values.size());
  const float loss = workspace_->loss_and_gradient(params_.data(), values.data(), b, grad_.data(),
                                                   row_grad_.values.data());
  if (const auto why = rows_.push(row_grad_, {settings_.learning_rate, step_}))
    throw std::runtime_error("ctr trainer: step " + std::to_string(step_) +
                             ": the rows' gradient was refused: " + to_string(*why));
  update_dense();
  ++step_;
  return loss;
}

void ctr_trainer::update_dense() {
  const auto& vars = layout_.variables();
  for (std::size_t i = 0; i < vars.size(); ++i) {
    const variable_info& v = vars[i];
    const row_update update(v.update, v.reg, settings_.learning_rate, step_);
    update.apply(params_.data() + v.offset, dense_slots_.data() + slot_offsets_[i],
                 grad_.data() + v.offset, v.size());
  }
}

binary_metrics ctr_trainer::evaluate(const std::vector<batch>& test) {
  std::vector<float> logits;
  std::vector<std::uint8_t> labels;
  for (const batch& b : test) {
    const std::vector<float> values = rows_.pull(workspace_->touched_rows(b));
    const float* scores = workspace_->scores(params_.data(), values.data(), b);
    for (std::size_t i = 0; i < b.size; ++i) {
      logits.push_back(scores[2 * i + 1]);  // a probability model's scores: [0, logit]
      labels.push_back(static_cast<std::uint8_t>(b.y[i]));
    }
  }
  return score_logits(logits, labels);
}

std::vector<batch> criteo_batches(const std::string& spec, std::size_t batch_size,
                                  std::uint64_t passes) {
  shard_request request;
  request.files = list_data_files(spec);
  stream_config cfg;
  cfg.text.format = text_format::criteo;
  cfg.batch_size = batch_size;
  cfg.passes = passes;
  cfg.order = unit_order::in_files;
  cfg.who = "bench";
  example_stream stream(plan_shards(request).at(0), cfg, read_position{});
  std::vector<batch> batches;
  for (batch b; stream.next(b);) batches.push_back(b);
  return batches;
}

}  // namespace downpour
