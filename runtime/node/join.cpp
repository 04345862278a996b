#include "runtime/node/join.hpp"

#include "runtime/net/connect.hpp"
#include "runtime/node/hello.hpp"
#include "runtime/node/job.hpp"

namespace downpour {

host_port chief_host(const options& opts) {
  return opts.join ? *opts.join : opts.worker_hosts.at(0);
}

namespace {

// What the chief says no to is this node's config: exit 2, one line.
bool is_refusal(const caf::error& err) {
  return err == errc::config_mismatch || err == errc::unauthorized || err == errc::join_refused;
}

}  // namespace

caf::expected<std::size_t> join_job(caf::actor_system& sys, const options& opts,
                                    const model_layout& layout, const supervisor_actor& chief) {
  caf::scoped_actor self{sys};
  const auto timeout = timespan_of(opts.connect_timeout_s);
  caf::expected<std::size_t> task{caf::make_error(errc::stopped)};
  auto request = signed_hello(
      self, chief, opts,
      hello_msg{job_fingerprint(opts, layout), hello_msg::to_chief, hello_msg::joining, {}},
      timeout);
  if (!request)
    task = std::move(request.error());
  else
    self->request(chief, timeout, join_atom_v, *request)
        .receive([&](std::uint32_t t) { task = static_cast<std::size_t>(t); },
                 [&](caf::error& err) { task = std::move(err); });
  if (task) return task;
  if (is_refusal(task.error()))
    return make_node_error(errc::join_refused,
                           "the chief at " + to_string(chief_host(opts)) +
                               " refused this worker's join: " + describe(task.error()));
  if (task.error() == caf::sec::request_timeout)
    return make_node_error(errc::unreachable, "cannot reach the chief at " +
                                                  to_string(chief_host(opts)) +
                                                  ": it did not answer our join within " +
                                                  seconds_text(opts.connect_timeout_s));
  return task;
}

}  // namespace downpour
