#include "protocol/peer_guard.hpp"

#include "protocol/messages.hpp"

namespace downpour {

peer_guard::peer_guard() : throttle_(std::chrono::seconds(10)) {}

void peer_guard::admit_member(const caf::node_id& node) {
  members_.insert(node);
}

void peer_guard::admit_chief(const caf::node_id& node) {
  members_.insert(node);
  chief_ = node;  // a chief started again replaces the old one
}

bool peer_guard::from_member(const caf::strong_actor_ptr& sender,
                             const caf::node_id& self) const {
  return sender && (sender->node() == self || members_.count(sender->node()) > 0);
}

bool peer_guard::from_chief(const caf::strong_actor_ptr& sender, const caf::node_id& self) const {
  return sender && (sender->node() == self || (chief_ && sender->node() == *chief_));
}

bool peer_guard::speaks_for(const caf::strong_actor_ptr& sender, std::uint32_t worker,
                            const caf::node_id& self) const {
  if (!sender) return false;
  if (sender->node() == self) return true;
  auto it = workers_.find(worker);
  return it != workers_.end() && it->second == sender->node();
}

void peer_guard::refuse(const std::string& what, const caf::strong_actor_ptr& sender,
                        const std::string& detail) {
  auto more = throttle_.pass(what);
  if (!more) return;
  const std::string who = sender ? "node " + to_string(sender->node()) : "an anonymous sender";
  log_.warn("refused " + what + detail + " from " + who +
            ", which did not prove it belongs to this cluster" + *more);
}

void peer_guard::refuse_on_behalf(const std::string& what, std::uint32_t worker,
                                  const caf::strong_actor_ptr& sender) {
  auto more = throttle_.pass(what + " on behalf");
  if (!more) return;
  const std::string who = sender ? "node " + to_string(sender->node()) : "an anonymous sender";
  const std::string index = std::to_string(worker);
  log_.warn("refused " + what + " for worker " + index + " from " + who +
            ": the sender is not the actor that joined as worker " + index + *more);
}

caf::error unproven_hello() {
  return caf::make_error(errc::unauthorized,
                         "hello refused: no proof of this cluster's secret (is "
                         "--cluster-secret-file the same secret on every node?)");
}

caf::error unauthorized(const std::string& what) {
  return caf::make_error(errc::unauthorized,
                         what + " refused: the sender did not prove it belongs to this cluster");
}

}  // namespace downpour
