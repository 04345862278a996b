// Repairs for CAF 0.17.6's OpenSSL transport that we make from outside
// Debian's libcaf_openssl, by interposing the OpenSSL calls it makes.
#pragma once

#include <cstddef>
#include <string>

namespace downpour {

// CAF's read loop on a connection stops after middleman.max-consecutive-reads
// (50) reads unless SSL_pending() covers the rest of the current message, and
// then waits for the socket to become readable. But OpenSSL decrypts a whole
// record (16 KB) at once: when the loop stops with part of a record (the
// start of the next small message) held inside OpenSSL and nothing left in
// the kernel, that message waits for the peer's next bytes, forever if none
// come (measured: 6 such stops in 2,000 steps of 2 ps + 2 workers). With
// this bound the loop only ever ends when OpenSSL wants more from the socket.
inline constexpr std::size_t tls_consecutive_reads = 1'000'000;

// Why a peer's certificate was refused, from OpenSSL's verify result: an
// expired or not yet valid one can be from the right CA; the rest means
// another issuer (or none). OpenSSL's words follow in parentheses.
std::string certificate_fault(long verify_result);

// Whether the OpenSSL interposers of runtime/net/tls_guard.cpp are linked in.
// Calling it is what pulls that object out of the static library (nothing
// else references its symbols at link time), so every TLS entry point calls
// it; a test asserts it.
bool tls_guard_linked();

}  // namespace downpour
