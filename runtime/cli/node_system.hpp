// The actor system of a node that is this process (--role=ps or worker, and
// the status probe), with a bounded teardown that may end the process: for
// the command line only, never for nodes run as threads of a larger program.
//
// CAF 0.17.6 can wait forever in ~actor_system: await_detached_threads()
// waits until every detached actor object is freed, and a connection attempt
// cut off by the node's end can keep the middleman actor alive. Measured: a
// stranger worker without TLS, refused by a TLS cluster, hung there, silent,
// 4 times in about 100 such strangers under load (gdb: main thread in
// await_detached_threads, the middleman's thread in
// private_thread::await_self_destroyed). The node's
// result is reported before the teardown, so a process whose teardown does
// not finish in time loses nothing by ending with that result's code.
#pragma once

#include <chrono>
#include <memory>

#include "reporting/log.hpp"
#include "caf/actor_system.hpp"
#include "runtime/node/node.hpp"

namespace downpour {

// How long a node's actor system may take to shut down once its job is done.
inline constexpr std::chrono::seconds teardown_bound{10};

class node_system {
 public:
  node_system(const options& opts, const model_layout& layout);
  node_system(const node_system&) = delete;
  node_system& operator=(const node_system&) = delete;
  // Unbounded: for a node that ends by an exception (end() was not called).
  ~node_system();

  caf::actor_system& get() { return *sys_; }

  // Shuts the actor system down; if that takes longer than bound, logs why
  // and ends the process at once with code, the result already reported.
  void end(int code, const logger& log, std::chrono::milliseconds bound = teardown_bound);

 private:
  node_config cfg_;
  std::unique_ptr<caf::actor_system> sys_;
};

}  // namespace downpour
