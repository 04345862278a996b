// A FIFO where a reader expects a file, and a call that must not wait on it.
// A reader that opens a FIFO blocks until a writer comes; the test is that
// writer of last resort: if the call has not returned within the bound, the
// FIFO is opened for writing and closed (the reader then sees an empty
// file), so a failing test ends instead of hanging.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <stdexcept>
#include <string>

#include "time_bounds.hpp"

namespace downpour::testing {

inline void make_fifo(const std::string& path) {
  if (::mkfifo(path.c_str(), 0600) != 0) throw std::runtime_error("mkfifo " + path + " failed");
}

// What call() returned or threw (as what()), or "BLOCKED" when it was still
// waiting on the FIFO after the bound.
template <class Call>
std::string without_blocking(const std::string& fifo, Call call) {
  auto done = std::async(std::launch::async, [&]() -> std::string {
    try {
      return call();
    } catch (const std::exception& e) {
      return e.what();
    }
  });
  if (done.wait_for(scaled(std::chrono::seconds(5))) == std::future_status::ready) return done.get();
  for (int i = 0; i < 100 && done.wait_for(std::chrono::milliseconds(10)) != std::future_status::ready; ++i) {
    const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
  }
  done.wait();
  return "BLOCKED";
}

}  // namespace downpour::testing
