// The whole job in one plain loop, no actors: the oracle the distributed
// runtime is checked against, and the speed floor it is measured against.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <vector>

#include "config/options.hpp"
#include "data/idx.hpp"
#include "runtime/job.hpp"

namespace downpour {

struct reference_result {
  std::vector<float> params;
  std::vector<float> ema;
  run_summary summary;
};

// Trains from the initial parameters to opts.last_step; logs step lines every
// opts.log_every steps to log.
reference_result run_reference(const options& opts, const mnist_data& data, std::ostream& log);

}  // namespace downpour
