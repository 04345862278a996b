// The job's model, from the program's model factory.
#pragma once

#include "config/options.hpp"
#include "runtime/cli/model_factory.hpp"
#include "runtime/node/job.hpp"

namespace downpour {

// The model for data, as make_model builds it for the options (--l2,
// --model, --hidden-units). A model the factory refuses (it throws
// std::invalid_argument), none, or one whose classes differ from the
// data's is a config_error of one line.
job_model build_job_model(const options& opts, data_splits data, const model_factory& make_model);

// What a ps needs: the layout of the model for the job's data, read as far
// as the format allows without the examples (runtime/node/job.hpp).
model_layout build_ps_layout(const options& opts, const application& app);

}  // namespace downpour
