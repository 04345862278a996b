#include "protocol/failure.hpp"

#include <exception>
#include <string>

namespace downpour {

void end_on_exception(caf::scheduled_actor* self) {
  self->set_exception_handler([](caf::scheduled_actor* actor, std::exception_ptr& e) {
    std::string what = "an exception of unknown type";
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      what = x.what();
    } catch (...) {
    }
    return caf::make_error(errc::failed, std::string(actor->name()) + ": " + what);
  });
}

}  // namespace downpour
