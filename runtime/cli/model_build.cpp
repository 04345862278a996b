#include "runtime/cli/model_build.hpp"

#include <stdexcept>
#include <utility>

namespace downpour {
namespace {

job_model make_checked(const model_request& request, const model_factory& make_model) {
  job_model job;
  try {
    job.net = make_model(request);
    if (!job.net) throw config_error("model: the model factory built no model");
    job.layout = job.net->layout();
  } catch (const std::invalid_argument& e) {
    throw config_error(std::string("model: ") + e.what());
  }
  if (job.net->classes() != request.classes)
    throw config_error("model: " + job.layout.to_string() + " has " +
                       std::to_string(job.net->classes()) + " classes but the data has " +
                       std::to_string(request.classes));
  return job;
}

}  // namespace

job_model build_job_model(const options& opts, data_splits data, const model_factory& make_model) {
  job_model job = make_checked(request_for(opts, data.summary()), make_model);
  job.data = std::move(data);
  return job;
}

model_layout build_ps_layout(const options& opts, const application& app) {
  return make_checked(request_for(opts, summarize_job_data(opts, app.readers)), app.make_model)
      .layout;
}

}  // namespace downpour
