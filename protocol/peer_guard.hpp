// Who may talk to an actor published on the network. CAF 0.17.6's listening
// side learns nothing about a connecting peer but its node id (the client
// handshake carries no application identifiers), and any peer that completes
// the handshake can send anything to a published actor: a stop, an exit, an
// error. So the actor itself admits a remote node only once it said hello
// with this cluster's fingerprint (cluster name, version, settings; over TLS
// on a connection authenticated by the cluster's CA), and refuses everything
// else from it, logged rate-limited.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "protocol/hello.hpp"
#include "reporting/log.hpp"
#include "caf/all.hpp"

namespace downpour {

class peer_guard {
 public:
  peer_guard();

  void set_log(logger log) { log_ = std::move(log); }

  // The node of a caller whose hello matched: a worker, or the chief.
  void admit_member(const caf::node_id& node);
  void admit_chief(const caf::node_id& node);
  // Every node admitted so far (the chief's too).
  const std::set<caf::node_id>& members() const { return members_; }
  // The node whose hello came as this worker: it alone speaks for it (a
  // worker started again says hello anew and takes the index over).
  void bind_worker(std::uint32_t worker, const caf::node_id& node) { workers_[worker] = node; }
  // Whether the sender may speak for this worker: on the actor's own node,
  // or the node bound to it.
  bool speaks_for(const caf::strong_actor_ptr& sender, std::uint32_t worker,
                  const caf::node_id& self) const;

  // Senders on the actor's own node are trusted; remote ones must have been
  // admitted (as anything, or as the chief). Anonymous remote messages are
  // indistinguishable from local anonymous ones, so neither is trusted.
  bool from_member(const caf::strong_actor_ptr& sender, const caf::node_id& self) const;
  bool from_chief(const caf::strong_actor_ptr& sender, const caf::node_id& self) const;

  // Logs a refused message (what it was, from which node), rate-limited per
  // what (detail, e.g. a difference of settings, is not part of the kind).
  void refuse(const std::string& what, const caf::strong_actor_ptr& sender,
              const std::string& detail = "");
  // Logs a message about a worker sent by an actor that is not that worker
  // (a member speaking on another's behalf), rate-limited the same way.
  void refuse_on_behalf(const std::string& what, std::uint32_t worker,
                        const caf::strong_actor_ptr& sender);

  // Exits only from the own node or the chief, errors and unexpected
  // messages dropped (CAF's defaults end the actor or print to stdout).
  template <class Self>
  void install(Self* self) {
    self->set_exit_handler([=](caf::exit_msg& m) {
      auto& guard = self->state.guard;
      if (!guard.from_chief(self->current_sender(), self->node()))
        return guard.refuse("an exit", self->current_sender());
      if (m.reason != caf::exit_reason::normal) self->quit(std::move(m.reason));
    });
    self->set_error_handler(
        [=](caf::error&) { self->state.guard.refuse("an error", self->current_sender()); });
    self->set_default_handler([=](caf::scheduled_actor*, caf::message_view&) -> caf::result<caf::message> {
      self->state.guard.refuse("an unexpected message", self->current_sender());
      return caf::sec::unexpected_message;
    });
  }

 private:
  std::set<caf::node_id> members_;
  std::map<std::uint32_t, caf::node_id> workers_;
  std::optional<caf::node_id> chief_;
  logger log_;
  log_throttle throttle_;
};

// The error a refused request gets back.
caf::error unauthorized(const std::string& what);

// Whether the current message of an actor with a peer_guard in its state
// comes from the chief (or the actor's own node); logs the refusal if not.
template <class Self>
bool from_chief(Self* self, const char* what) {
  auto& guard = self->state.guard;
  if (guard.from_chief(self->current_sender(), self->node())) return true;
  guard.refuse(what, self->current_sender());
  return false;
}

// Whether a down message comes from the actor that went down (a proxy, for
// a lost connection); one sent by anyone else is forged, and logged.
template <class Self>
bool from_source(Self* self, const caf::down_msg& dm) {
  if (caf::actor_cast<caf::actor_addr>(self->current_sender()) == dm.source) return true;
  self->state.guard.refuse("a down message", self->current_sender());
  return false;
}

// The same for any admitted node.
template <class Self>
bool from_member(Self* self, const char* what) {
  auto& guard = self->state.guard;
  if (guard.from_member(self->current_sender(), self->node())) return true;
  guard.refuse(what, self->current_sender());
  return false;
}

// A nonce for the sender's next hello. Anonymous senders get none: they
// could not say hello with it.
template <class Self>
caf::result<std::string> issue_nonce(Self* self) {
  const auto sender = self->current_sender();
  if (!sender) return unauthorized("an anonymous challenge");
  return self->state.nonces.issue(to_string(sender->node()));
}

// Whether a hello proves the cluster's secret (protocol/hello.hpp): nodes
// other than the actor's own must, when the cluster has one. A failed proof
// is logged.
template <class Self>
bool hello_proven(Self* self, const hello_msg& m) {
  auto& st = self->state;
  const auto sender = self->current_sender();
  if (st.cfg.secret.empty() || (sender && sender->node() == self->node())) return true;
  if (sender && proves_secret(st.cfg.secret, st.nonces, m, sender->node())) return true;
  st.guard.refuse("a hello without proof of the cluster secret", sender);
  return false;
}

// The error a hello without a valid proof gets back.
caf::error unproven_hello();

// The same for the node that said hello as this worker; a member speaking on
// another worker's behalf is refused (and logged).
// A node's hello names its task; with --trainers K its trainers are the
// workers task * K .. task * K + K - 1, and the node speaks for each.
inline void bind_trainers(peer_guard& guard, std::uint32_t task, std::size_t trainers,
                          const caf::node_id& node) {
  for (std::size_t t = 0; t < trainers; ++t)
    guard.bind_worker(static_cast<std::uint32_t>(task * trainers + t), node);
}

template <class Self>
bool from_worker(Self* self, const char* what, std::uint32_t worker) {
  auto& guard = self->state.guard;
  if (guard.speaks_for(self->current_sender(), worker, self->node())) return true;
  if (guard.from_member(self->current_sender(), self->node()))
    guard.refuse_on_behalf(what, worker, self->current_sender());
  else
    guard.refuse(what, self->current_sender());
  return false;
}

}  // namespace downpour
