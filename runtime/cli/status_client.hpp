// `downpour status`: asks a running chief for its job's state.
#pragma once

#include <iosfwd>

#include "config/options.hpp"

namespace downpour {

// Prints the chief's status to out and returns 0, or one error line to err
// and 1 when the chief cannot be reached within --connect-timeout.
int run_status(const options& opts, std::ostream& out, std::ostream& err);

}  // namespace downpour
