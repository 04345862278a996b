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
// SSL_accept also logs a refused peer (CAF drops it without a word).
#include "runtime/net/tls_guard.hpp"

#include "reporting/log.hpp"
#include "runtime/net/peer_notes.hpp"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

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

// Why OpenSSL gave up on a handshake: what it means for a cluster, then
// OpenSSL's own words.
std::string refusal_reason(const SSL* ssl, int error) {
  long verify = SSL_get_verify_result(ssl);
  if (verify != X509_V_OK) return downpour::certificate_fault(verify);
  unsigned long e = ERR_peek_last_error();
  const char* text = e != 0 ? ERR_reason_error_string(e) : nullptr;
  if (text == nullptr)
    return error == SSL_ERROR_SYSCALL || error == SSL_ERROR_ZERO_RETURN
               ? "it closed the connection during the handshake"
               : "TLS error " + std::to_string(error);
  std::string why = text;
  if (why == "peer did not return a certificate") return "it sent no certificate (" + why + ")";
  if (why.find("alert unknown ca") != std::string::npos ||
      why.find("alert bad certificate") != std::string::npos)
    return "it does not accept our certificate, so it trusts another CA (" + why + ")";
  if (why == "unexpected eof while reading")
    return "it closed the connection during the handshake (" + why + ")";
  if (why == "wrong version number" || why == "http request" || why == "packet length too long")
    return "it does not speak TLS (" + why + ")";
  return why;
}

// Each accepted session carries a note (OpenSSL ex_data): the peer's
// address, taken on the first SSL_accept while the peer is surely connected
// (a refusing peer may be gone by the time its refusal is seen), and then
// whether its refusal was logged (CAF may call SSL_accept again on a session
// that failed; it is logged once).
const char reported[] = "reported";

void free_note(void*, void* note, CRYPTO_EX_DATA*, int, long, void*) {
  if (note != reported) OPENSSL_free(note);
}

int note_index() {
  static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, free_note);
  return index;
}

void note_peer(SSL* ssl) {
  if (SSL_get_ex_data(ssl, note_index()) == nullptr)
    SSL_set_ex_data(ssl, note_index(), OPENSSL_strdup(downpour::peer_address(SSL_get_fd(ssl)).c_str()));
}

// A handshake that failed (not one that only waits for the socket) is a
// refused peer: a foreign or missing certificate, or no TLS at all.
void report_refusal(SSL* ssl, int ret) {
  int saved_errno = errno;
  int error = SSL_get_error(ssl, ret);
  auto* note = static_cast<char*>(SSL_get_ex_data(ssl, note_index()));
  if (error != SSL_ERROR_WANT_READ && error != SSL_ERROR_WANT_WRITE && note != reported) {
    static downpour::log_throttle throttle{std::chrono::seconds(10)};
    const std::string why = refusal_reason(ssl, error);  // one of OpenSSL's few reasons
    if (auto more = throttle.pass(why))
      std::fprintf(stderr, "downpour: refused a TLS connection from %s: %s%s\n",
                   note != nullptr ? note : "a peer", why.c_str(), more->c_str());
    SSL_set_ex_data(ssl, note_index(), const_cast<char*>(reported));
    OPENSSL_free(note);
  }
  errno = saved_errno;
}

// A read that failed on a TLS alert from the peer: its refusal of us.
bool peer_alert(SSL* ssl, int ret) {
  if (ret > 0 || SSL_get_error(ssl, ret) != SSL_ERROR_SSL) return false;
  const char* text = ERR_reason_error_string(ERR_peek_last_error());
  return text != nullptr && std::string(text).find("alert") != std::string::npos;
}

// Our own handshake with a peer (CAF connecting) that failed: noted for the
// connect that waits for it (peer_notes.hpp), as CAF never answers it. A
// refusal (a certificate of another CA, the peer's alert) will not change on
// its own; a closed connection may (the peer restarting). Under TLS 1.3 a
// server refuses our certificate after our side has finished, so its alert
// comes with the first read.
void note_our_handshake(SSL* ssl, int ret) {
  const int saved_errno = errno;
  const int error = SSL_get_error(ssl, ret);
  auto* note = static_cast<char*>(SSL_get_ex_data(ssl, note_index()));
  if (ret <= 0 && error != SSL_ERROR_WANT_READ && error != SSL_ERROR_WANT_WRITE &&
      note != nullptr && note != reported) {
    const bool refused = SSL_get_verify_result(ssl) != X509_V_OK || peer_alert(ssl, ret);
    downpour::note_peer_failure(
        note, refused ? downpour::peer_fault::tls_refused : downpour::peer_fault::tls_broken,
        "the TLS handshake failed: " + refusal_reason(ssl, error));
  }
  errno = saved_errno;
}

}  // namespace

extern "C" {

int SSL_read(SSL* ssl, void* buf, int num) {
  static const auto real = real_openssl<int (*)(SSL*, void*, int)>("SSL_read");
  ERR_clear_error();
  const int ret = real(ssl, buf, num);
  if (ret <= 0 && peer_alert(ssl, ret)) note_our_handshake(ssl, ret);
  return ret;
}

int SSL_write(SSL* ssl, const void* buf, int num) {
  static const auto real = real_openssl<int (*)(SSL*, const void*, int)>("SSL_write");
  ERR_clear_error();
  return real(ssl, buf, num);
}

int SSL_connect(SSL* ssl) {
  static const auto real = real_openssl<int (*)(SSL*)>("SSL_connect");
  ERR_clear_error();
  note_peer(ssl);
  const int ret = real(ssl);
  note_our_handshake(ssl, ret);
  return ret;
}

int SSL_accept(SSL* ssl) {
  static const auto real = real_openssl<int (*)(SSL*)>("SSL_accept");
  ERR_clear_error();
  note_peer(ssl);
  int ret = real(ssl);
  if (ret <= 0) report_refusal(ssl, ret);
  return ret;
}

}  // extern "C"

namespace downpour {

// What is wrong with a peer's certificate: expired or not yet valid ones
// can be from the right CA; the rest means another issuer (or none).
std::string certificate_fault(long verify) {
  const std::string text = std::string(" (") + X509_verify_cert_error_string(verify) + ")";
  switch (verify) {
    case X509_V_ERR_CERT_HAS_EXPIRED:
      return "its certificate has expired" + text;
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return "its certificate is not valid yet" + text;
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_CERT_SIGNATURE_FAILURE:
      return "its certificate is not from this cluster's CA" + text;
    default:
      return "its certificate was refused" + text;
  }
}

bool tls_guard_linked() {
  return true;
}

}  // namespace downpour
