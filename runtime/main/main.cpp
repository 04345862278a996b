// downpour: one binary for every role.
#include <iostream>

#include "config/options.hpp"
#include "data/idx.hpp"
#include "runtime/commands.hpp"
#include "runtime/connect.hpp"
#include "runtime/node.hpp"
#include "runtime/reference_trainer.hpp"
#include "runtime/status_client.hpp"

namespace {

using namespace downpour;

int fail(const caf::error& err) {
  std::cerr << "downpour: error: " << describe(err) << std::endl;
  return 1;
}

int run_reference_role(const options& opts) {
  auto data = load_mnist(opts.data_dir, opts.validation_size);
  auto result = run_reference(opts, *data, std::cout);
  report_final(opts, result.summary);
  return 0;
}

int run(const options& opts) {
  switch (opts.role) {
    case role_kind::reference:
      return run_reference_role(opts);
    case role_kind::ps: {
      auto r = run_ps_node(opts);
      return r ? 0 : fail(r.error());
    }
    case role_kind::worker: {
      auto r = run_worker_node(opts);
      if (!r) return fail(r.error());
      if (opts.task == 0) report_final(opts, r->summary);
      return 0;
    }
    case role_kind::local: {
      auto r = run_local(opts);
      if (!r) return fail(r.error());
      report_final(opts, r->summary);
      return 0;
    }
  }
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    auto opts = parse_options(argc, argv, std::cout);
    if (!opts) return 0;
    if (opts->command == command_kind::status) return run_status(*opts, std::cout, std::cerr);
    if (opts->command != command_kind::train) return run_command(*opts, std::cout, std::cerr);
    return run(*opts);
  } catch (const config_error& e) {
    std::cerr << "downpour: " << e.what() << std::endl;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "downpour: " << e.what() << std::endl;
    return 1;
  }
}
