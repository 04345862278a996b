#include "runtime/cli/node_system.hpp"

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

namespace downpour {

node_system::node_system(const options& opts, const model_layout& layout)
    : cfg_(opts, layout), sys_(std::make_unique<caf::actor_system>(cfg_)) {}

node_system::~node_system() = default;

void node_system::end(int code, const logger& log, std::chrono::milliseconds bound) {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  std::thread watchdog([&] {
    std::unique_lock<std::mutex> lock(m);
    if (cv.wait_for(lock, bound, [&] { return done; })) return;
    log.warn("the actor system did not shut down within " + std::to_string(bound.count()) +
             " ms (CAF 0.17.6 can wait forever for a detached actor kept alive by a cut-off "
             "connection attempt); exiting with code " + std::to_string(code));
    std::fflush(nullptr);
    std::_Exit(code);
  });
  sys_.reset();
  {
    std::lock_guard<std::mutex> lock(m);
    done = true;
  }
  cv.notify_one();
  watchdog.join();
}

}  // namespace downpour
