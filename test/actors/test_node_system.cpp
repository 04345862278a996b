// A node process's actor system: its teardown is bounded, so a node whose
// CAF shutdown never finishes still ends, with its result's exit code and a
// line saying why. Each case runs the node in a child process (the bound
// ends the whole process).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <future>

#include "model/mlp_spec.hpp"
#include "runtime/cli/node_system.hpp"
#include "cluster_procs.hpp"

namespace test_node_system {

using namespace downpour;
using namespace downpour::testing;
using namespace std::chrono_literals;

namespace {

enum class teardown { clean, kept_alive };

// What CAF 0.17.6 waits for forever: a detached actor that has ended but
// whose object is never freed (here: a handle leaked on purpose).
void keep_a_detached_actor_alive(caf::actor_system& sys) {
  auto a = sys.spawn<caf::detached>([]() -> caf::behavior { return {[](int) {}}; });
  std::make_unique<caf::actor>(a).release();  // never freed
  caf::anon_send_exit(a, caf::exit_reason::kill);
}

// Runs a node system in a child whose stderr goes to log_path and which
// ends it with code 3 and the given bound; the child's exit status (reaped
// within the failure bound; -1 past it).
int child_status(teardown how, const std::string& log_path, std::chrono::milliseconds bound) {
  std::fflush(nullptr);  // the child must not print the parent's buffered output again
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 2);
    {
      node_system sys{options{}, mlp_spec{}.layout("mlp")};
      if (how == teardown::kept_alive) keep_a_detached_actor_alive(sys.get());
      sys.end(3, logger{"worker:1", log_level::info}, bound);
    }
    ::_exit(0);  // end() returned: the teardown finished
  }
  auto reaped = std::async(std::launch::async, [pid] {
    int status = 0;
    ::waitpid(pid, &status, 0);
    return status;
  });
  const bool in_time = reaped.wait_for(scaled(60s)) == std::future_status::ready;
  if (!in_time) ::kill(pid, SIGKILL);
  const int status = reaped.get();
  if (!in_time) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

TEST_CASE("a node whose actor system never shuts down ends within the bound with its code and a line") {
  temp_dir dir{"node-system"};
  CHECK(child_status(teardown::kept_alive, dir / "err.log", 300ms) == 3);
  const auto err = read_text(dir / "err.log");
  CAPTURE(err);
  const auto lines = parse_log(err);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].node == "worker:1");
  CHECK(lines[0].level == log_level::warn);
  CHECK(lines[0].message.rfind("the actor system did not shut down within 300 ms", 0) == 0);
  CHECK(lines[0].message.find("exiting with code 3") != std::string::npos);
}

TEST_CASE("a node whose actor system shuts down returns from end without a word") {
  temp_dir dir{"node-system"};
  // A bound far above a clean shutdown's milliseconds, so only a hang fails.
  CHECK(child_status(teardown::clean, dir / "err.log", scaled(30s)) == 0);
  CHECK(read_text(dir / "err.log").empty());
}

}  // namespace test_node_system
