#include "runtime/node/ps_watch.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>

#include "protocol/failure.hpp"
#include "reporting/log.hpp"
#include "config/durations.hpp"
#include "runtime/net/connect.hpp"

namespace downpour {
namespace {

const char* const chief_name = "the chief (worker 0)";

// Sends `to` (restore_atom, true) once a chief has initialised or restored
// the shard (a restore fails a pending await with errc::restored: reached all
// the same), or (restore_atom, false) after the timeout. An actor of its own,
// because a blocking actor cannot wait for a response and a down message at
// once.
caf::behavior first_contact_probe(caf::event_based_actor* self, shard_actor shard,
                                  caf::timespan timeout, caf::actor to) {
  end_on_exception(self);
  self->request(shard, timeout, await_atom_v, std::int64_t{0})
      .then([=](std::int64_t) { self->send(to, restore_atom_v, true); },
            [=](caf::error& err) { self->send(to, restore_atom_v, err == errc::restored); });
  return {[=](stop_atom) { self->quit(); }};
}

caf::error unless_normal(const caf::error& reason) {
  if (reason == caf::exit_reason::normal || reason == caf::exit_reason::user_shutdown)
    return caf::none;
  return reason;
}

class ps_watch {
 public:
  ps_watch(caf::actor_system& sys, const options& opts, shard_actor shard,
           chief_back_fn on_chief_back)
      : sys_(sys),
        opts_(opts),
        shard_(std::move(shard)),
        on_chief_back_(std::move(on_chief_back)),
        self_(sys) {}

  caf::error run() {
    self_->monitor(shard_);
    if (!first_chief_came()) return outcome_;
    auto chief = reach_chief("restored this shard but cannot be reached");
    while (chief) {
      self_->monitor(*chief);
      if (!chief_lost() || shard_ended()) return outcome_;
      node_logger(opts_, role_kind::ps, opts_.task)
          .warn(chief_at() + " is gone; waiting up to " + seconds_text(opts_.connect_timeout_s) +
                " for it to be started again");
      chief = reach_chief("did not come back");
      if (chief && on_chief_back_)
        if (auto err = on_chief_back_(*chief))
          node_logger(opts_, role_kind::ps, opts_.task)
              .warn("cannot rejoin after losing the chief: " + describe(err));
    }
    return outcome_;
  }

 private:
  std::string chief_at() const { return chief_name + (" at " + to_string(opts_.worker_hosts[0])); }

  std::string within() const { return " within " + seconds_text(opts_.connect_timeout_s); }

  // Stops the shard and says why: a ps without a chief serves nobody.
  void give_up(const std::string& why) {
    self_->send_exit(shard_, caf::exit_reason::user_shutdown);  // the shard obeys no anonymous exit
    outcome_ = make_node_error(errc::unreachable, why + "; this ps stops");
  }

  bool is_shard(const caf::down_msg& dm) const {
    return dm.source == caf::actor_cast<caf::actor_addr>(shard_);
  }

  // True once a chief has reached the shard; false with outcome_ set.
  bool first_chief_came() {
    auto probe = sys_.spawn(first_contact_probe, shard_, timespan_of(opts_.connect_timeout_s),
                            caf::actor_cast<caf::actor>(self_));
    bool came = false;
    self_->receive([&](caf::down_msg& dm) { outcome_ = unless_normal(dm.reason); },
                   [&](restore_atom, bool reached) {
                     came = reached;
                     if (!reached)
                       give_up("no chief initialised this shard" + within() + " (is " + chief_at() +
                               " running?)");
                   });
    caf::anon_send(probe, stop_atom_v);
    return came;
  }

  // The chief's published supervisor, to notice when the chief is lost;
  // nullopt with outcome_ set.
  // Tried in slices of a second, the shard's end looked for between them: a
  // chief that ended the job stops the shard, and its exit can come in just
  // after the chief's connection was seen lost.
  std::optional<supervisor_actor> reach_chief(const std::string& otherwise) {
    const auto until = deadline::in_seconds(opts_.connect_timeout_s);
    for (;;) {
      const auto slice = deadline::in_seconds(
          std::min(1.0, std::chrono::duration<double>(until.left()).count()));
      auto chief = connect_live_until<supervisor_actor>(sys_, opts_, opts_.worker_hosts[0],
                                                        chief_name, slice);
      if (chief) return *chief;
      if (shard_ended()) return std::nullopt;
      if (until.passed()) break;
    }
    give_up(chief_at() + " " + otherwise + within());
    return std::nullopt;
  }

  // True with outcome_ set if the shard's down message is here already (the
  // chief may have stopped it with a reason before it went).
  bool shard_ended() {
    bool ended = false;
    self_->receive(
        [&](caf::down_msg& dm) {
          ended = true;
          outcome_ = unless_normal(dm.reason);
        },
        caf::after(std::chrono::milliseconds(0)) >> [] {});
    return ended;
  }

  // True when the chief was lost (killed, or hung past --node-timeout);
  // false with outcome_ set when the shard stopped.
  bool chief_lost() {
    caf::down_msg first;
    self_->receive([&](caf::down_msg& dm) { first = std::move(dm); });
    if (is_shard(first)) {
      outcome_ = unless_normal(first.reason);
      return false;
    }
    if (first.reason == caf::exit_reason::remote_link_unreachable) return true;
    // The chief ended the job: its stop is on the way to the shard.
    self_->receive([&](caf::down_msg& dm) { outcome_ = unless_normal(dm.reason); },
                   caf::after(timespan_of(opts_.connect_timeout_s)) >>
                       [&] { give_up(chief_at() + " ended the job but did not stop this shard"); });
    return false;
  }

  caf::actor_system& sys_;
  const options& opts_;
  shard_actor shard_;
  chief_back_fn on_chief_back_;
  caf::scoped_actor self_;
  caf::error outcome_;
};

}  // namespace

caf::error serve_while_led(caf::actor_system& sys, const options& opts, const shard_actor& shard,
                           chief_back_fn on_chief_back) {
  return ps_watch{sys, opts, shard, std::move(on_chief_back)}.run();
}

}  // namespace downpour
