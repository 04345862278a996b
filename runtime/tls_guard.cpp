// CAF 0.17.6's OpenSSL session calls SSL_read/SSL_write/SSL_connect/SSL_accept
// and then SSL_get_error, but never empties the thread's OpenSSL error queue
// (it drains it only to build log messages, and Debian's build logs nothing).
// SSL_get_error reports SSL_ERROR_SSL whenever that queue is not empty, so
// once any connection of a node fails (a peer closing without close_notify:
// "unexpected eof while reading"; a refused stranger's handshake), the next
// harmless SSL_ERROR_WANT_READ on every other connection served by the same
// multiplexer thread is taken for a failure and that healthy connection is
// dropped. Requests in flight on it never complete: the job stalls.
// Measured: 2 ps + 2 workers over TLS lost the chief's ps connections as soon
// as worker 1 finished, and a ps lost its trainers when a stranger knocked.
//
// OpenSSL documents that the queue must be empty before each TLS I/O call.
// The executable defines these four functions, so the dynamic linker binds
// libcaf_openssl's calls to them (an executable's definitions come first);
// each clears the queue and calls the real one in libssl (RTLD_NEXT).
#include "runtime/tls_guard.hpp"

#include <dlfcn.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <cstdio>
#include <cstdlib>

namespace {

template <class Fn>
Fn real_openssl(const char* name) {
  void* sym = ::dlsym(RTLD_NEXT, name);
  if (sym == nullptr) {  // libssl not loaded: nothing could have called us
    std::fprintf(stderr, "downpour: error: %s not found in libssl\n", name);
    std::abort();
  }
  return reinterpret_cast<Fn>(sym);
}

}  // namespace

extern "C" {

int SSL_read(SSL* ssl, void* buf, int num) {
  static const auto real = real_openssl<int (*)(SSL*, void*, int)>("SSL_read");
  ERR_clear_error();
  return real(ssl, buf, num);
}

int SSL_write(SSL* ssl, const void* buf, int num) {
  static const auto real = real_openssl<int (*)(SSL*, const void*, int)>("SSL_write");
  ERR_clear_error();
  return real(ssl, buf, num);
}

int SSL_connect(SSL* ssl) {
  static const auto real = real_openssl<int (*)(SSL*)>("SSL_connect");
  ERR_clear_error();
  return real(ssl);
}

int SSL_accept(SSL* ssl) {
  static const auto real = real_openssl<int (*)(SSL*)>("SSL_accept");
  ERR_clear_error();
  return real(ssl);
}

}  // extern "C"

namespace downpour {

bool tls_guard_linked() {
  return true;
}

}  // namespace downpour
