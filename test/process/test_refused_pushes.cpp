// A member of the cluster whose every push is refused (rows it did not pull,
// row ids of its previous pull) never consumes a step nor holds the job: in
// async and ssp its tickets go back, in sync its refused pushes count toward
// the rounds it owes, and the job ends at exactly --last-step with its
// checkpoint and every node exiting 0. The member is the test itself,
// speaking the protocol as worker 2 of three worker hosts (two started).
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cluster_procs.hpp"
#include "refused_member.hpp"
#include "runtime/files/checkpoint.hpp"

namespace test_refused_pushes {

using namespace downpour;
using namespace downpour::testing;
using namespace std::chrono_literals;

namespace {

// A small logistic regression's data: the rows are what the member pushes wrongly.
struct sparse_data {
  temp_dir dir{"refused-data"};
  sparse_data() {
    process gen({DOWNPOUR_GEN_LIBSVM, "--out", dir.str(), "--train", "20000", "--test", "2000",
                 "--seed", "3", "--vocabulary", "65536", "--informative", "256"},
                dir / "gen.log");
    REQUIRE(gen.wait(120s) == 0);
  }
};

const sparse_data& data() {
  static const sparse_data d;
  return d;
}

std::vector<std::string> job_args(const std::string& mode, std::int64_t last_step) {
  return {"--model=logreg",
          "--data-format=libsvm",
          "--train-file=" + data().dir / "train.libsvm",
          "--test-file=" + data().dir / "test.libsvm",
          "--sparse-rows=65536",
          "--mode=" + mode,
          "--last-step=" + std::to_string(last_step),
          "--log-every=50",
          "--save-checkpoint-secs=0",
          "--connect-timeout=30"};
}

struct running_job {
  running_job(const std::string& mode, std::int64_t last_step, const temp_dir& dir)
      : last(last_step),
        c(make_cluster(1, 3, dir / "ckpt", job_args(mode, last_step))),
        ps0(c.node("ps", 0), dir / "ps0.log"),
        chief(c.node("worker", 0), dir / "w0.log"),
        w1(c.node("worker", 1), dir / "w1.log") {}

  // Every node exits 0, the chief's final line and the checkpoint saved are
  // at exactly the last step, and the ps refused `refused` pushes of worker 2.
  void check_exact_end(std::size_t refused) {
    for (auto* p : {&chief, &w1, &ps0}) {
      CAPTURE(p->output());
      CHECK(p->wait(scaled(300s)) == 0);
    }
    const auto out = chief.output();
    CAPTURE(out);
    CHECK(out.find("final: global_step=" + std::to_string(last) + " ") != std::string::npos);
    CHECK(read_checkpoint(c.dir + "/" + checkpoint_name(last)).global_step == last);
    CHECK(!std::filesystem::exists(c.dir + "/" + checkpoint_name(last + 1)));
    const auto ps_log = ps0.output();
    CAPTURE(ps_log);
    std::size_t lines = 0;
    for (const auto& r : parse_log(ps_log))
      lines += r.message.find("rejected a push") != std::string::npos &&
               r.message.find("push of rows worker 2 did not pull") != std::string::npos;
    CHECK(lines == refused);
  }

  std::int64_t last;
  cluster_args c;
  process ps0, chief, w1;
};

// Async and ssp: the member takes tickets and pushes rows it did not pull or
// the ids of its previous pull, refused each time, and settles them refused;
// its last ticket it never pushes for: its down gives that one back.
void refused_with_tickets(const std::string& mode) {
  temp_dir dir("refused-" + mode);
  running_job job(mode, 3000, dir);
  REQUIRE(job.chief.wait_for_output("global_step:", scaled(120s)));
  refused_member member(job.c.node("worker", 2), first_port(job.c.ps), first_port(job.c.workers));
  constexpr int pushes = 20;
  for (int i = 0; i < pushes; ++i) {
    const auto ticket = member.ticket();
    REQUIRE_MESSAGE(ticket >= 0, "the job ended before the member's pushes were refused");
    const auto pulled = member.pull(0, i);
    const auto err = i % 2 == 0 ? member.push_rows_not_pulled(pulled)
                                : member.push_previous_ids(pulled);
    CHECK(err == errc::unpulled_rows);
    member.settle_refused();
  }
  REQUIRE(member.ticket() >= 0);  // held, never pushed: returned when the member is gone
  member.leave();
  job.check_exact_end(pushes);
  CHECK(job.chief.output().find("worker 2 is gone; 1 of its tickets returned") !=
        std::string::npos);
}

}  // namespace

TEST_CASE("async: pushes of rows not pulled and of stale ids are refused, their tickets return, "
          "and the job ends at exactly its last step") {
  refused_with_tickets("async");
}

TEST_CASE("ssp: pushes of rows not pulled and of stale ids are refused, their tickets return, "
          "and the job ends at exactly its last step") {
  refused_with_tickets("ssp");
}

TEST_CASE("sync: a worker whose every push is refused holds no round, and the job ends at "
          "exactly its last step") {
  // Three replicas to aggregate: every round waits for the member, whose
  // push for it is refused each time (before, the first round never ended).
  temp_dir dir("refused-sync");
  running_job job("sync", 150, dir);
  refused_member member(job.c.node("worker", 2), first_port(job.c.ps), first_port(job.c.workers));
  std::size_t refused = 0;
  for (std::int64_t round = 0;; ++round) {
    const auto pulled = member.pull(round, static_cast<int>(round));
    if (pulled.step >= job.last) break;
    round = pulled.step;
    const auto err = round % 2 == 0 ? member.push_rows_not_pulled(pulled)
                                    : member.push_previous_ids(pulled);
    CHECK(err == errc::unpulled_rows);
    ++refused;
  }
  CHECK(refused == static_cast<std::size_t>(job.last));  // one push a round
  member.leave();
  job.check_exact_end(refused);
}

}  // namespace test_refused_pushes
