#include "runtime/cli/status_client.hpp"

#include <ostream>

#include "reporting/status_json.hpp"
#include "runtime/cli/node_system.hpp"
#include "runtime/cli/status_text.hpp"
#include "runtime/net/connect.hpp"
#include "runtime/node/node.hpp"

namespace downpour {

namespace {

int ask_status(caf::actor_system& sys, const options& opts, const host_port& chief,
               std::ostream& out, std::ostream& err) {
  auto supervisor = connect_to<supervisor_actor>(sys, opts, chief, "the chief");
  if (!supervisor) {
    err << "downpour: error: " << describe(supervisor.error()) << std::endl;
    return 1;
  }
  caf::scoped_actor self{sys};
  int code = 1;
  self->request(*supervisor, std::chrono::seconds(10), status_atom_v)
      .receive(
          [&](std::string& json_text) {
            try {
              if (opts.status_json)
                out << with_chief(json_text, to_string(chief)) << std::endl;
              else
                out << "chief: " << to_string(chief) << "\n"
                    << format_status(parse_status_json(json_text));
              code = 0;
            } catch (const std::exception& e) {
              err << "downpour: error: " << e.what() << std::endl;
            }
          },
          [&](caf::error& e) {
            err << "downpour: error: the chief at " << to_string(chief)
                << " did not answer: " << describe(e) << std::endl;
          });
  return code;
}

}  // namespace

// A probe must end: a connect cut off by --connect-timeout can hold CAF's
// shutdown as it holds a node's (runtime/cli/node_system.hpp).
int run_status(const options& opts, std::ostream& out, std::ostream& err) {
  host_port chief = opts.worker_hosts.at(0);
  if (!opts.chief_address.empty()) chief = parse_host_list(opts.chief_address, "--chief").at(0);
  // The chief's answers carry no tensors: the bound of a model of no floats.
  node_system sys{opts, model_layout{}};
  const int code = ask_status(sys.get(), opts, chief, out, err);
  sys.end(code, logger{});
  return code;
}

}  // namespace downpour
