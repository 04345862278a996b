#include "runtime/cli/node_system.hpp"

#include <cstdio>
#include <cstdlib>
#include <future>
#include <string>
#include <thread>

namespace downpour {

node_system::node_system(const options& opts, const model_layout& layout)
    : cfg_(opts, layout), sys_(std::make_unique<caf::actor_system>(cfg_)) {}

node_system::~node_system() = default;

void node_system::end(int code, const logger& log, std::chrono::milliseconds bound) {
  std::promise<void> shut_down;
  std::thread watchdog([&log, code, bound, done = shut_down.get_future()] {
    if (done.wait_for(bound) == std::future_status::ready) return;
    log.warn("the actor system did not shut down within " + std::to_string(bound.count()) +
             " ms (CAF 0.17.6 can wait forever for a detached actor kept alive by a cut-off "
             "connection attempt); exiting with code " + std::to_string(code));
    std::fflush(nullptr);
    std::_Exit(code);
  });
  sys_.reset();
  shut_down.set_value();
  watchdog.join();
}

}  // namespace downpour
