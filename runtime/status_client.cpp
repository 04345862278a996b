#include "runtime/status_client.hpp"

#include <ostream>

#include "runtime/connect.hpp"
#include "runtime/node.hpp"

namespace downpour {

int run_status(const options& opts, std::ostream& out, std::ostream& err) {
  host_port chief = opts.worker_hosts.at(0);
  if (!opts.chief_address.empty()) chief = parse_host_list(opts.chief_address, "--chief").at(0);
  node_config cfg{opts};
  caf::actor_system sys{cfg};
  auto supervisor = connect_to<supervisor_actor>(sys, opts, chief, "the chief");
  if (!supervisor) {
    err << "downpour: error: " << describe(supervisor.error()) << std::endl;
    return 1;
  }
  caf::scoped_actor self{sys};
  int code = 1;
  self->request(*supervisor, std::chrono::seconds(10), status_atom_v)
      .receive(
          [&](std::string& text) {
            out << "chief: " << to_string(chief) << "\n" << text;
            code = 0;
          },
          [&](caf::error& e) {
            err << "downpour: error: the chief at " << to_string(chief)
                << " did not answer: " << describe(e) << std::endl;
          });
  return code;
}

}  // namespace downpour
