// Small in-process jobs for tests: the options every oracle and resume test
// starts from, and bit-for-bit comparison of parameter buffers and of what a
// job's checkpoint holds.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "config/options.hpp"
#include "runtime/files/checkpoint.hpp"

namespace downpour::testing {

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
