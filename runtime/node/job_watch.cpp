#include "runtime/node/job_watch.hpp"

#include <optional>

#include "protocol/failure.hpp"

namespace downpour {
namespace {

struct relay_state {
  supervisor_actor supervisor;
  caf::error failure;  // the first watched actor that an exception ended
  std::optional<caf::response_promise> waiting;
  static inline const char* name = "job_watch";
};

using relay_pointer = caf::stateful_actor<relay_state>*;

void answer(relay_pointer self, caf::message reply) {
  auto& waiting = self->state.waiting;
  if (!waiting) return;
  waiting->deliver(std::move(reply));
  waiting.reset();
}

caf::behavior relay(relay_pointer self, supervisor_actor supervisor) {
  end_on_exception(self);
  self->state.supervisor = std::move(supervisor);
  self->set_down_handler([=](caf::down_msg& dm) {
    if (dm.reason != errc::failed || self->state.failure) return;
    self->state.failure = dm.reason;
    answer(self, caf::make_message(dm.reason));
  });
  return {
      [=](const caf::actor& a) {
        if (a && a->node() == self->node()) self->monitor(a);
      },
      [=](end_atom) {
        auto& st = self->state;
        auto rp = self->make_response_promise();
        if (st.failure) {
          rp.deliver(st.failure);
          return rp;
        }
        st.waiting = rp;  // answered by whichever comes first
        self->request(st.supervisor, caf::infinite, end_atom_v)
            .then(
                [=](std::int64_t step, float loss, std::string& why) {
                  answer(self, caf::make_message(step, loss, std::move(why)));
                },
                [=](caf::error& err) { answer(self, caf::make_message(std::move(err))); });
        return rp;
      },
  };
}

}  // namespace

job_watch::job_watch(caf::actor_system& sys, const supervisor_actor& supervisor)
    : relay_(sys.spawn(relay, supervisor)) {
  watch(supervisor);
}

job_watch::~job_watch() {
  caf::anon_send_exit(relay_, caf::exit_reason::user_shutdown);
}

void job_watch::add(caf::actor a) {
  caf::anon_send(relay_, std::move(a));
}

caf::expected<job_end> job_watch::await_end(caf::scoped_actor& self) {
  caf::expected<job_end> end{caf::make_error(errc::stopped)};
  self->request(relay_, caf::infinite, end_atom_v)
      .receive([&](std::int64_t step, float loss, std::string& why) {
                 end = job_end{step, loss, std::move(why)};
               },
               [&](caf::error& err) { end = std::move(err); });
  return end;
}

}  // namespace downpour
