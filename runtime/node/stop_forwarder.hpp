// Delivers a stop request from the signal watcher's thread to an actor that
// takes control messages only from known senders (protocol/peer_guard.hpp): a
// local actor passes it on as its own message. Not a scoped_actor made on
// that thread: one kept the actor system from ever shutting down (CAF
// 0.17.6, measured: the stopped job hung in ~actor_system).
#pragma once

#include <string>
#include <utility>

#include "protocol/messages.hpp"

namespace downpour {

class stop_forwarder {
 public:
  template <class Handle>
  stop_forwarder(caf::actor_system& sys, Handle target)
      : actor_(sys.spawn([target](caf::event_based_actor* self) -> caf::behavior {
          return {[=](stop_atom, std::string& why) {
            self->send(target, stop_atom_v, std::move(why));
          }};
        })) {}
  ~stop_forwarder() { caf::anon_send_exit(actor_, caf::exit_reason::user_shutdown); }
  stop_forwarder(const stop_forwarder&) = delete;
  stop_forwarder& operator=(const stop_forwarder&) = delete;

  void forward(const std::string& why) const { caf::anon_send(actor_, stop_atom_v, why); }

 private:
  caf::actor actor_;
};

}  // namespace downpour
