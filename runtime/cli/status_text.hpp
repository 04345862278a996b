// The text of `downpour status`: what the chief knows of its job, as
// "key: value" lines a person reads and a script can grep. The same facts as
// JSON: reporting/status_json.hpp.
#pragma once

#include <string>

#include "reporting/status.hpp"

namespace downpour {

std::string format_status(const status_facts& f);

}  // namespace downpour
