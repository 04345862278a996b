// A bound on every TCP connect that CAF 0.17.6 makes, interposed from
// outside Debian's libcaf_io (as runtime/tls_guard.* does for OpenSSL).
//
// CAF connects with a blocking connect() inside its middleman actor. To a
// host that is cut off (a network partition: SYNs dropped, no reset, no
// ICMP) that call blocks for the kernel's SYN retries, about 2 minutes, and
// with it every other connect of the node, and at the end the node's
// shutdown: measured, a chief whose ps stayed cut off past --connect-timeout
// logged nothing and did not exit for minutes instead of exiting 1 naming
// the ps. The binary's connect() is the one libcaf_io calls: a blocking
// stream socket is connected without blocking and given up after
// connect_attempt_bound with ETIMEDOUT; the callers (runtime/net/connect.hpp)
// retry within --connect-timeout, each attempt with fresh SYNs.
#pragma once

#include <chrono>

namespace downpour {

// Two SYNs (the kernel retransmits after 1 s); a reachable peer answers in
// milliseconds, and a lost SYN is retried by the next attempt.
inline constexpr std::chrono::milliseconds connect_attempt_bound{2000};

// Whether the interposed connect() of runtime/net/connect_guard.cpp is linked
// in; calling it pulls that object out of the static library, so every
// connect path calls it (and a test asserts it).
bool connect_guard_linked();

}  // namespace downpour
