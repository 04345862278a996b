// --cluster-secret-file: a hello proves the secret over a nonce the receiver
// issued to the sending node, so a hello captured on the wire admits no one,
// whether replayed by another node or by its own sender.
#include <doctest/doctest.h>

#include <csignal>
#include <fstream>
#include <sstream>

#include "cluster_procs.hpp"
#include "forged_client.hpp"
#include "runtime/node/job.hpp"
#include "runtime/node/signals.hpp"

namespace test_cluster_secret {

using namespace downpour;
using namespace downpour::testing;
using namespace std::chrono_literals;

namespace {

options options_of(const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out;
  auto o = parse_options(static_cast<int>(argv.size()), argv.data(), out);
  REQUIRE(o.has_value());
  return *o;
}

// A nonce, then the answer to a hello: the step, or the refusal.
template <class Handle>
std::string ask_nonce(forged_client& client, const Handle& h) {
  caf::scoped_actor self{client.system()};
  std::string nonce;
  self->request(h, caf::timespan{scaled(30s)}, challenge_atom_v)
      .receive([&](std::string& n) { nonce = std::move(n); }, [](caf::error&) {});
  REQUIRE(nonce.size() == 32);
  return nonce;
}

caf::expected<std::int64_t> say_hello(forged_client& client, const shard_actor& ps,
                                      const hello_msg& m) {
  caf::scoped_actor self{client.system()};
  caf::expected<std::int64_t> answer{caf::make_error(caf::sec::request_timeout)};
  self->request(ps, caf::timespan{scaled(30s)}, hello_atom_v, m)
      .receive([&](std::int64_t step) { answer = step; }, [&](caf::error& e) { answer = e; });
  return answer;
}

}  // namespace

TEST_CASE("with a cluster secret a captured hello admits no one: replayed by another node or "
          "again by its own, it is refused; the job ends exactly") {
  temp_dir dir("secret-replay");
  const auto secret_file = dir / "secret";
  std::ofstream(secret_file) << "correct horse battery staple\n";
  // Three worker hosts, two started: the third's index is the one a member
  // of the cluster (the test, holding the secret) says hello as.
  auto c = make_cluster(1, 3, dir,
                        {"--cluster-secret-file=" + secret_file, "--last-step=2000",
                         "--log-every=100", "--save-checkpoint-secs=0", "--connect-timeout=30"});
  process ps0(c.node("ps", 0), dir / "ps0.log");
  process chief(c.node("worker", 0), dir / "w0.log");
  process w1(c.node("worker", 1), dir / "w1.log");
  REQUIRE(chief.wait_for_output("global_step:", 120s));

  const options member_opts = options_of(c.node("worker", 2));
  forged_client member(member_opts, "downpour");
  const auto ps_seen_by_member = member.connect<shard_actor>(first_port(c.ps));
  hello_msg captured{job_fingerprint(member_opts, mlp_spec{}.layout("mlp")), 0, 2, {}};
  captured.proof = hello_proof(member_opts.cluster_secret, ask_nonce(member, ps_seen_by_member),
                               captured, member.system().node());
  auto admitted = say_hello(member, ps_seen_by_member, captured);
  REQUIRE_MESSAGE(admitted, describe(admitted.error()));  // the proof itself is good
  auto again = say_hello(member, ps_seen_by_member, captured);
  CHECK(!again);
  if (!again) CHECK(again.error() == errc::unauthorized);  // its nonce is spent

  {
    // Admitted as worker 2, the member may not push for worker 1.
    caf::scoped_actor self{member.system()};
    push_msg for_another;
    for_another.worker = 1;
    caf::error push;
    self->request(ps_seen_by_member, caf::timespan{scaled(30s)}, push_atom_v, for_another)
        .receive([](std::int64_t) {}, [&](caf::error& e) { push = std::move(e); });
    CHECK(push == errc::unauthorized);
  }

  options stranger_opts = member_opts;
  stranger_opts.cluster_secret.clear();
  forged_client stranger(stranger_opts, "downpour");
  const auto ps_seen_by_stranger = stranger.connect<shard_actor>(first_port(c.ps));
  auto replayed = say_hello(stranger, ps_seen_by_stranger, captured);
  CHECK(!replayed);
  if (!replayed) CHECK(replayed.error() == errc::unauthorized);
  ask_nonce(stranger, ps_seen_by_stranger);  // a nonce of its own does not help: the proof names the member
  auto with_own_nonce = say_hello(stranger, ps_seen_by_stranger, captured);
  CHECK(!with_own_nonce);
  if (!with_own_nonce) CHECK(with_own_nonce.error() == errc::unauthorized);
  {
    caf::scoped_actor self{stranger.system()};
    caf::error pull;
    self->request(ps_seen_by_stranger, caf::timespan{scaled(30s)}, pull_atom_v, std::int64_t{0})
        .receive([](pull_reply&) {}, [&](caf::error& e) { pull = std::move(e); });
    CHECK(pull == errc::unauthorized);
  }
  for (auto* p : {&chief, &w1, &ps0}) {
    CAPTURE(p->output());
    CHECK(p->wait(300s) == 0);
  }
  CHECK(chief.output().find("final: global_step=2000 ") != std::string::npos);
  const auto ps_log = ps0.output();
  CAPTURE(ps_log);
  CHECK(ps_log.find("refused a hello without proof of the cluster secret from node ") !=
        std::string::npos);
  CHECK(ps_log.find("refused a push for worker 1 from node ") != std::string::npos);
  CHECK(ps_log.find("correct horse") == std::string::npos);
}

TEST_CASE("a node without the cluster's secret is refused at its hello and told why") {
  temp_dir dir("secret-missing");
  const auto secret_file = dir / "secret";
  std::ofstream(secret_file) << "correct horse battery staple\n";
  auto c = make_cluster(1, 1, dir, {"--last-step=200", "--connect-timeout=10"});
  process ps0(c.node("ps", 0, {"--cluster-secret-file=" + secret_file}), dir / "ps0.log");
  process chief(c.node("worker", 0), dir / "w0.log");
  CAPTURE(chief.output());
  CHECK(chief.wait(120s) == exit_failed);
  const auto out = chief.output();
  CHECK(out.find("hello refused: no proof of this cluster's secret (is --cluster-secret-file the "
                 "same secret on every node?)") != std::string::npos);
  CHECK(out.find("global_step:") == std::string::npos);
  ps0.kill(SIGTERM);
  ps0.wait(60s);
}

}  // namespace test_cluster_secret
