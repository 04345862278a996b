#include "actors/push_keeper.hpp"

#include <utility>
#include <vector>

namespace downpour {
namespace {

struct push_keeper_state {
  std::vector<kept_push> kept;
  static inline const char* name = "push_keeper";
};

push_keeper_actor::behavior_type push_keeper(
    push_keeper_actor::stateful_pointer<push_keeper_state> self) {
  return {
      // Only this node's trainers and its start of trainers know the handle.
      [=](keep_atom, kept_push& p) { self->state.kept.push_back(std::move(p)); },
      [=](keep_atom) { return std::exchange(self->state.kept, {}); },
  };
}

}  // namespace

push_keeper_actor spawn_push_keeper(caf::actor_system& sys) { return sys.spawn(push_keeper); }

}  // namespace downpour
