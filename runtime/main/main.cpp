// downpour: one binary for every role.
#include <iostream>

#include "config/options.hpp"
#include "data/batch_record.hpp"
#include "data/idx.hpp"
#include "runtime/commands.hpp"
#include "runtime/connect.hpp"
#include "runtime/log.hpp"
#include "runtime/node.hpp"
#include "runtime/reference_trainer.hpp"
#include "runtime/status_client.hpp"

namespace {

using namespace downpour;

int fail(const logger& log, const caf::error& err) {
  log.error(describe(err));
  return 1;
}

int run_reference_role(const options& opts, const logger& log) {
  auto data = load_training_data(opts);
  log_stream steps{log, log_level::info};
  auto result = run_reference(opts, *data, steps);
  report_final(opts, result.summary, log);
  return 0;
}

int run_node(const options& opts, const logger& log) {
  switch (opts.role) {
    case role_kind::reference:
      return run_reference_role(opts, log);
    case role_kind::ps: {
      auto r = run_ps_node(opts);
      return r ? 0 : fail(log, r.error());
    }
    case role_kind::worker: {
      auto r = run_worker_node(opts);
      if (!r) return fail(log, r.error());
      if (opts.task == 0) report_final(opts, r->summary, log);
      return 0;
    }
    case role_kind::local: {
      auto r = run_local(opts);
      if (!r) return fail(log, r.error());
      report_final(opts, r->summary, log);
      return 0;
    }
  }
  return 1;
}

// Training: every failure is a log line of this node.
int train(const options& opts) {
  const logger log = node_logger(opts, opts.role, opts.task);
  try {
    check_batch_record_environment();
    return run_node(opts, log);
  } catch (const config_error& e) {
    log.error(e.what());
    return 2;
  } catch (const std::exception& e) {
    log.error(e.what());
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    auto opts = parse_options(argc, argv, std::cout);
    if (!opts) return 0;
    if (opts->command == command_kind::status) return run_status(*opts, std::cout, std::cerr);
    if (opts->command != command_kind::train) return run_command(*opts, std::cout, std::cerr);
    return train(*opts);
  } catch (const config_error& e) {
    std::cerr << "downpour: " << e.what() << std::endl;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "downpour: " << e.what() << std::endl;
    return 1;
  }
}
