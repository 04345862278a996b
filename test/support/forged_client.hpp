// A stranger that speaks BASP through CAF itself, the real attack: a second
// actor system in the test process that connects to a node's published actor
// (over TLS when given certificates) and sends it what only the chief or a
// worker may send.
#pragma once

#include <memory>
#include <string>

#include "protocol/messages.hpp"
#include "config/cluster_fingerprint.hpp"
#include "config/version.hpp"
#include "model/mlp_spec.hpp"
#include "runtime/net/connect.hpp"
#include "runtime/node/node.hpp"
#include "time_bounds.hpp"

namespace downpour::testing {

class forged_client {
 public:
  // opts: the stranger's own settings (its --cluster-name, certificates).
  // Its CAF application identifier is the target's, as an attacker would set
  // it: CAF checks it only on the connecting side.
  forged_client(options opts, const std::string& target_cluster)
      : opts_(std::move(opts)), cfg_(opts_, mlp_spec{}.layout("mlp")) {
    cfg_.set("middleman.app-identifiers",
             std::vector<std::string>{std::string("downpour-") + build_version() + "-" + target_cluster});
    sys_ = std::make_unique<caf::actor_system>(cfg_);
  }

  template <class Handle>
  Handle connect(std::uint16_t port) {
    auto h = remote_actor_within<Handle>(*sys_, opts_.tls(), "127.0.0.1", port,
                                         std::chrono::duration_cast<caf::timespan>(
                                             scaled(std::chrono::seconds(30))));
    if (!h) throw std::runtime_error("forged client: " + describe(h.error()));
    return *h;
  }

  // The same while the node may still be starting: tried again until it
  // listens (the bound only ends a failure).
  template <class Handle>
  Handle connect_when_up(std::uint16_t port) {
    auto h = connect_until<Handle>(*sys_, opts_, host_port{"127.0.0.1", port}, "the node",
                                   deadline{std::chrono::duration_cast<caf::timespan>(
                                       scaled(std::chrono::seconds(60)))});
    if (!h) throw std::runtime_error("forged client: " + describe(h.error()));
    return *h;
  }

  caf::actor_system& system() { return *sys_; }
  // The stranger's own fingerprint (its cluster name and settings).
  std::string fingerprint() const { return cluster_fingerprint(opts_); }

 private:
  options opts_;
  node_config cfg_;
  std::unique_ptr<caf::actor_system> sys_;
};

// What the stranger gets from a ps: every control message refused (the
// requests answered with errc::unauthorized, so the ps was alive to refuse
// them after the stop and exits sent first), and its hello refused naming
// the first setting that differs (expected_difference).
inline void attack_shard(forged_client& stranger, const shard_actor& ps,
                         const std::string& expected_difference) {
  caf::scoped_actor self{stranger.system()};
  const caf::timespan bound{scaled(std::chrono::seconds(30))};
  self->send(ps, stop_atom_v);
  self->send_exit(ps, caf::exit_reason::kill);
  caf::anon_send(ps, stop_atom_v);
  caf::anon_send_exit(ps, caf::exit_reason::kill);
  self->send(caf::actor_cast<caf::actor>(ps), caf::make_error(caf::sec::runtime_error));
  caf::error hello;
  self->request(ps, bound, hello_atom_v, hello_msg{stranger.fingerprint(), 0, 0, {}})
      .receive([](std::int64_t) {}, [&](caf::error& e) { hello = std::move(e); });
  CHECK(hello == errc::config_mismatch);
  CHECK(describe(hello).find(expected_difference) != std::string::npos);
  auto step_refused = [&](auto&&... xs) {
    caf::error err;
    self->request(ps, bound, std::forward<decltype(xs)>(xs)...)
        .receive([](std::int64_t) {}, [&](caf::error& e) { err = std::move(e); });
    return err == errc::unauthorized;
  };
  CHECK(step_refused(init_atom_v, shard_init{}));
  CHECK(step_refused(restore_atom_v, shard_init{}));
  CHECK(step_refused(push_atom_v, push_msg{}));
  CHECK(step_refused(await_atom_v, std::int64_t{0}));
  caf::error snapshot;
  self->request(ps, bound, snapshot_atom_v)
      .receive([](shard_snapshot&) {}, [&](caf::error& e) { snapshot = std::move(e); });
  CHECK(snapshot == errc::unauthorized);
  caf::error pull;
  self->request(ps, bound, pull_atom_v, std::int64_t{0})
      .receive([](pull_reply&) {}, [&](caf::error& e) { pull = std::move(e); });
  CHECK(pull == errc::unauthorized);
}

}  // namespace downpour::testing
