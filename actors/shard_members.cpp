#include <string>
#include <utility>

#include "actors/shard_state.hpp"
#include "config/cluster_fingerprint.hpp"
#include "protocol/failure.hpp"

// Who a shard admits and whose exit ends it: the hello and exit handlers of
// actors/parameter_shard.cpp.
namespace downpour {

// The caller must take this shard for the one it is (one ps answering at two
// entries of --ps-hosts would be initialised as both) and share its settings.
caf::result<std::int64_t> on_hello(shard_pointer self, const hello_msg& m) {
  auto& st = self->state;
  const auto sender = self->current_sender();
  auto me = "ps " + std::to_string(st.cfg.index);
  // Proof first: a stranger learns nothing of the settings from a refusal.
  if (!hello_proven(self, m)) return unproven_hello();
  const auto& fingerprint = m.fingerprint;
  const auto shard = m.shard;
  const auto worker = m.worker;
  if (shard != st.cfg.index)
    return caf::make_error(errc::config_mismatch,
                           "the node at the address of ps " + std::to_string(shard) + " is " + me +
                               " (is one host:port in --ps-hosts twice, or under two names?)");
  if (auto diff = fingerprint_difference(fingerprint, st.cfg.fingerprint, me)) {
    st.guard.refuse("a hello with other settings", sender, " (" + *diff + ")");
    if (worker == 0 && st.step < 0 && sender)
      st.refused_by.emplace(sender->node(),
                            *fingerprint_difference(st.cfg.fingerprint, fingerprint, "the chief"));
    return caf::make_error(errc::config_mismatch, *diff);
  }
  if (!sender) return st.step;
  if (worker == hello_msg::from_replica) {  // a ps keeping a backup of this shard
    st.guard.admit_member(sender->node());
    st.replica_nodes.insert(sender->node());
    return st.step;
  }
  if (worker == 0)
    st.guard.admit_chief(sender->node());
  else
    st.guard.admit_member(sender->node());
  bind_trainers(st.guard, worker, st.cfg.trainers, sender->node());
  return st.step;
}

// Exits from the chief (or this node) end the shard; one from a chief that
// refused this fresh ps ends it with the difference named.
void on_exit(shard_pointer self, caf::exit_msg& m) {
  auto& st = self->state;
  const auto sender = self->current_sender();
  if (st.refused_by && sender && sender->node() == st.refused_by->first)
    return self->quit(caf::make_error(errc::config_mismatch,
                                      "refused by the chief: " + st.refused_by->second));
  if (!st.guard.from_chief(sender, self->node())) return st.guard.refuse("an exit", sender);
  if (m.reason) self->quit(std::move(m.reason));
}

}  // namespace downpour
