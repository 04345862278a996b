// A member of a sparse model's cluster whose pushes are refused: the test
// process says hello to ps 0 and to the chief as a worker of the host lists
// (with the cluster's settings, so it is admitted), pulls rows as that worker
// and pushes rows it did not pull, or the ids of its previous pull. In async
// and ssp it takes tickets and settles each push as refused, as a worker does.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "forged_client.hpp"
#include "parse_options.hpp"
#include "runtime/node/job.hpp"
#include "test_jobs.hpp"

namespace downpour::testing {

class refused_member {
 public:
  // args: the member's command line (a worker's, argv[0] the binary).
  refused_member(const std::vector<std::string>& args, std::uint16_t ps_port,
                 std::uint16_t chief_port)
      : opts_(parse(std::vector<std::string>(args.begin() + 1, args.end()))),
        client_(std::make_unique<forged_client>(opts_, opts_.cluster_name)),
        self_(std::make_unique<caf::scoped_actor>(client_->system())),
        ps_(client_->connect_when_up<shard_actor>(ps_port)),
        chief_(client_->connect_when_up<supervisor_actor>(chief_port)) {
    const auto fingerprint = job_fingerprint(opts_, job_for(opts_).layout);
    caf::error err;
    (*self_)->request(ps_, bound(), hello_atom_v, hello_msg{fingerprint, 0, index(), {}})
        .receive([](std::int64_t) {}, [&](caf::error& e) { err = std::move(e); });
    REQUIRE_MESSAGE(!err, "hello to ps 0: " << describe(err));
    (*self_)
        ->request(chief_, bound(), hello_atom_v,
                  hello_msg{fingerprint, hello_msg::to_chief, index(), {}})
        .receive([](std::int64_t, coordinator_actor&) {}, [&](caf::error& e) { err = std::move(e); });
    REQUIRE_MESSAGE(!err, "hello to the chief: " << describe(err));
  }

  // The global step the next push makes, or -1: the job is over.
  std::int64_t ticket() {
    std::int64_t t = -2;
    caf::error err;
    (*self_)->request(chief_, bound(), ticket_atom_v, index(), 0.5f)
        .receive([&](std::int64_t x) { t = x; }, [&](caf::error& e) { err = std::move(e); });
    REQUIRE_MESSAGE(!err, "ticket: " << describe(err));
    return t;
  }

  // Every shard (the one) refused the push of the ticket last taken.
  void settle_refused() { (*self_)->send(chief_, settle_atom_v, index(), std::int64_t{1}); }

  // The rows of the n-th batch's keys, once ps 0 is at min_step.
  pull_reply pull(std::int64_t min_step, int n) {
    previous_ = std::move(last_);
    last_ = keys_of(n);
    pull_reply reply;
    caf::error err;
    (*self_)->request(ps_, bound(), pull_atom_v, row_pull{min_step, index(), key_list{last_}})
        .receive([&](pull_reply& r) { reply = std::move(r); },
                 [&](caf::error& e) { err = std::move(e); });
    REQUIRE_MESSAGE(!err, "pull at step " << min_step << ": " << describe(err));
    return reply;
  }

  // Rows next to those the last pull asked for, none of them pulled.
  caf::error push_rows_not_pulled(const pull_reply& pulled) {
    auto keys = last_;
    for (auto& k : keys) ++k;
    return push(pulled, keys);
  }

  // The ids of the pull before the last: the shard remembers the last only.
  caf::error push_previous_ids(const pull_reply& pulled) { return push(pulled, previous_); }

  // Gone as a node: the chief and the ps see it go down.
  void leave() {
    ps_ = nullptr;
    chief_ = nullptr;
    self_.reset();
    client_.reset();
  }

 private:
  static caf::timespan bound() { return caf::timespan{scaled(std::chrono::seconds(30))}; }
  std::uint32_t index() const { return static_cast<std::uint32_t>(opts_.task); }

  // Three ascending keys, disjoint from those of n - 1 and n + 1.
  static std::vector<std::uint64_t> keys_of(int n) {
    const auto base = static_cast<std::uint64_t>(3 * n + 1);
    return {base, base + 20000, base + 40000};
  }

  // A gradient of zeros for the dense part and for each row.
  caf::error push(const pull_reply& pulled, const std::vector<std::uint64_t>& keys) {
    const auto dim = last_.empty() ? 1 : pulled.rows.values.size() / last_.size();
    push_msg m{pulled.step, index(), shared_tensor{floats(pulled.params.size(), 0.0f)},
               key_list{keys}, tensor{floats(keys.size() * dim, 0.0f)}};
    caf::error err;
    (*self_)->request(ps_, bound(), push_atom_v, std::move(m))
        .receive([](std::int64_t) {}, [&](caf::error& e) { err = std::move(e); });
    return err;
  }

  // Destroyed in reverse: the handles and the actor before their system.
  options opts_;
  std::unique_ptr<forged_client> client_;
  std::unique_ptr<caf::scoped_actor> self_;
  shard_actor ps_;
  supervisor_actor chief_;
  std::vector<std::uint64_t> last_, previous_;
};

}  // namespace downpour::testing
