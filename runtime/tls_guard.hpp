// Repairs for CAF 0.17.6's OpenSSL transport that we make from outside
// Debian's libcaf_openssl, by interposing the OpenSSL calls it makes.
#pragma once

namespace downpour {

// Whether the OpenSSL interposers of runtime/tls_guard.cpp are linked in.
// Calling it is what pulls that object out of the static library (nothing
// else references its symbols at link time), so every TLS entry point calls
// it; a test asserts it.
bool tls_guard_linked();

}  // namespace downpour
