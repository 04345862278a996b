// The whole job in one plain loop, no actors: the oracle the distributed
// runtime is checked against, and the speed floor it is measured against.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <vector>

#include "config/options.hpp"
#include "runtime/node/job.hpp"

namespace downpour {

struct reference_result {
  std::vector<float> params;
  std::vector<float> ema;
  run_summary summary;
};

// Where a reference run starts: a global step with its parameters and shadows.
struct reference_start {
  std::int64_t step = 0;
  std::vector<float> params;
  std::vector<float> ema;
};

// Trains from the initial parameters to opts.last_step; logs step lines every
// opts.log_every steps to log.
reference_result run_reference(const options& opts, const job_model& job, std::ostream& log);

// The same from a restored state (a checkpoint), with a fresh batcher, as a
// restored cluster's worker 0 has.
reference_result run_reference(const options& opts, const job_model& job, std::ostream& log,
                               reference_start start);

}  // namespace downpour
