// `downpour status --json`: the facts of the text form as one JSON object with
// stable field names (docs/operations.md lists them). The chief answers a
// status request with this text; the client prints it or formats it as text.
#pragma once

#include <string>

#include "reporting/status.hpp"

namespace downpour {

// One JSON object; non-finite numbers (a diverged loss) are null.
std::string status_json(const status_facts& f);

// The facts back from status_json's text; throws std::runtime_error when the
// text is not such an object.
status_facts parse_status_json(const std::string& text);

// The text with "chief": address added as the first field.
std::string with_chief(const std::string& json_text, const std::string& address);

}  // namespace downpour
