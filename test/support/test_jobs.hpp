// Small in-process jobs for tests: the options every oracle and resume test
// starts from, and bit-for-bit comparison of parameter buffers and of what a
// job's checkpoint holds.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "config/options.hpp"
#include "model/builtin.hpp"
#include "runtime/cli/model_build.hpp"
#include "runtime/files/checkpoint.hpp"
#include "runtime/node/node.hpp"

namespace downpour::testing {

// The built-in models, as `downpour` builds them (runtime/cli/main.cpp).
inline std::shared_ptr<const model> builtin_model(const model_request& request) {
  return make_builtin_model(request.choice, request);
}

// The job's model for data, as a `downpour` node builds it for the options.
inline job_model job_for(const options& o, data_splits data) {
  return build_job_model(o, std::move(data), builtin_model);
}

// The same with the options' data (--data-dir).
inline job_model job_for(const options& o) { return job_for(o, load_job_data(o)); }

// --role=local in this process with the options' model and data.
inline caf::expected<job_result> run_local_job(const options& o, const node_hooks& hooks = {}) {
  return run_local(o, job_for(o), hooks);
}

// ps shards and workers in one process, steps global steps, checkpoints in
// dir, no timed checkpoints and no progress output.
inline options local_job(std::size_t ps, std::size_t workers, std::int64_t steps,
                         const std::string& dir) {
  options o;
  o.last_step = steps;
  o.ps_hosts.assign(ps, host_port{"127.0.0.1", 0});
  o.worker_hosts.assign(workers, host_port{"127.0.0.1", 0});
  o.log_every = 1000000;
  o.quiet = true;
  o.checkpoint_dir = dir;
  o.save_checkpoint_secs = 0;
  o.connect_timeout_s = 20;
  o.pipeline = false;  // the oracles compare step by step with the reference trainer
  return o;
}

inline bool bit_identical(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// The checkpoint a job saved at its last step, read back from its file.
inline checkpoint final_checkpoint(const options& o) {
  return read_checkpoint(o.checkpoint_dir + "/" + checkpoint_name(o.last_step));
}

// A checkpoint's parameters and shadows against a run's, bit for bit.
template <class Run>
bool holds_bits_of(const checkpoint& c, const Run& run) {
  return bit_identical(c.params, run.params) && bit_identical(c.ema, run.ema);
}

}  // namespace downpour::testing
