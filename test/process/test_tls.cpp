// Mutual TLS: a cluster of certified nodes trains to its last step while
// strangers (another CA, no TLS, a plaintext client) are refused and logged.
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <memory>

#include "cluster_procs.hpp"
#include "forged_client.hpp"
#include "runtime/net/connect.hpp"
#include "runtime/net/ports.hpp"
#include "runtime/net/tls_guard.hpp"
#include "model/mlp_spec.hpp"
#include "runtime/node/node.hpp"
#include "runtime/node/signals.hpp"

namespace test_tls {

using namespace downpour;
using namespace downpour::testing;
using namespace std::chrono_literals;

namespace {

void make_certs(const std::string& dir) {
  process p({std::string(DOWNPOUR_SOURCE_DIR) + "/scripts/make-certs", dir, "127.0.0.1"},
            dir + ".log");
  REQUIRE(p.wait(120s) == 0);
}

int connect_loopback(std::uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  return fd;
}

// A plaintext client: connects, says something that is not TLS, and returns
// whether the server closed the connection within the timeout.
bool plaintext_client_is_closed(std::uint16_t port, std::chrono::milliseconds timeout) {
  int fd = connect_loopback(port);
  const char hello[] = "GET / HTTP/1.0\r\n\r\n";
  REQUIRE(::send(fd, hello, sizeof hello - 1, MSG_NOSIGNAL) > 0);
  pollfd p{fd, POLLIN, 0};
  bool closed = false;
  char buf[512];
  while (!closed && ::poll(&p, 1, static_cast<int>(timeout.count())) > 0)
    closed = ::recv(fd, buf, sizeof buf, 0) <= 0;  // an alert may come first
  ::close(fd);
  return closed;
}

// A TLS client with no certificate. Under TLS 1.3 its handshake completes
// before the server has checked it, so it then reads: the server's refusal
// (an alert, or the connection closed) must come within the timeout.
bool client_without_certificate_is_refused(std::uint16_t port, std::chrono::milliseconds timeout) {
  int fd = connect_loopback(port);
  timeval tv{static_cast<time_t>(timeout.count() / 1000),
             static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx{SSL_CTX_new(TLS_client_method()),
                                                        SSL_CTX_free};
  std::unique_ptr<SSL, decltype(&SSL_free)> ssl{SSL_new(ctx.get()), SSL_free};
  SSL_set_fd(ssl.get(), fd);
  bool refused = SSL_connect(ssl.get()) <= 0;
  if (!refused) {
    char buf[64];
    int n = SSL_read(ssl.get(), buf, sizeof buf);
    const int why = SSL_get_error(ssl.get(), n);
    refused = n <= 0 && why != SSL_ERROR_WANT_READ &&
              !(why == SSL_ERROR_SYSCALL && (errno == EAGAIN || errno == EWOULDBLOCK));
  }
  ::close(fd);
  return refused;
}

}  // namespace

struct tls_cluster {
  temp_dir dir{"tls"};
  cluster_args c = make_cluster(2, 2, dir, {"--last-step=2000", "--log-every=100",
                                            "--save-checkpoint-secs=0"});
  tls_cluster() {
    make_certs(dir / "good");
    make_certs(dir / "foreign");
  }
  // TLS options trusting the CA in ca_dir, with the certificate of cert_dir.
  std::vector<std::string> tls(const std::string& ca_dir, const std::string& cert_dir) {
    return {"--tls-ca=" + dir / (ca_dir + "/ca.pem"),
            "--tls-cert=" + dir / (cert_dir + "/127.0.0.1.pem"),
            "--tls-key=" + dir / (cert_dir + "/127.0.0.1.key")};
  }
  // A worker that is not part of the cluster (it never gets far enough to
  // write anything): it gives up after a second.
  std::vector<std::string> stranger(std::vector<std::string> tls_options) {
    tls_options.push_back("--connect-timeout=1");
    return c.node("worker", 1, tls_options);
  }
};

// The same cluster with a job longer than any test waits: it trains while
// strangers knock, however slow the machine, until the test stops it.
struct long_tls_cluster : tls_cluster {
  long_tls_cluster() {
    c = make_cluster(2, 2, dir, {"--last-step=100000000", "--log-every=100",
                                 "--save-checkpoint-secs=0"});
  }
};

using ssl_ctx_ptr = std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)>;
using ssl_ptr = std::unique_ptr<SSL, decltype(&SSL_free)>;

TEST_CASE_FIXTURE(tls_cluster,
                  "a stale OpenSSL error does not make a connected TLS session that waits for "
                  "data look failed") {
  REQUIRE(tls_guard_linked());
  ssl_ctx_ptr server_ctx{SSL_CTX_new(TLS_server_method()), SSL_CTX_free};
  ssl_ctx_ptr client_ctx{SSL_CTX_new(TLS_client_method()), SSL_CTX_free};
  REQUIRE(SSL_CTX_use_certificate_chain_file(server_ctx.get(),
                                             (dir / "good/127.0.0.1.pem").c_str()) == 1);
  REQUIRE(SSL_CTX_use_PrivateKey_file(server_ctx.get(), (dir / "good/127.0.0.1.key").c_str(),
                                      SSL_FILETYPE_PEM) == 1);
  ssl_ptr server{SSL_new(server_ctx.get()), SSL_free};
  ssl_ptr client{SSL_new(client_ctx.get()), SSL_free};
  BIO* client_end = nullptr;
  BIO* server_end = nullptr;
  REQUIRE(BIO_new_bio_pair(&client_end, 0, &server_end, 0) == 1);
  SSL_set_bio(client.get(), client_end, client_end);  // each SSL owns its end
  SSL_set_bio(server.get(), server_end, server_end);
  SSL_set_connect_state(client.get());
  SSL_set_accept_state(server.get());
  for (int i = 0; i < 10 && !(SSL_is_init_finished(client.get()) &&
                              SSL_is_init_finished(server.get())); ++i) {
    SSL_do_handshake(client.get());
    SSL_do_handshake(server.get());
  }
  REQUIRE(SSL_is_init_finished(client.get()));
  char buf[16];
  REQUIRE(SSL_read(client.get(), buf, sizeof buf) <= 0);  // takes the session tickets
  // What another connection's end leaves in the thread's error queue; CAF
  // 0.17.6 never empties it, and without the guard SSL_get_error then calls
  // this session's harmless want-read a failure (SSL_ERROR_SSL).
  ERR_raise(ERR_LIB_SSL, SSL_R_UNEXPECTED_EOF_WHILE_READING);
  int ret = SSL_read(client.get(), buf, sizeof buf);
  CHECK(ret <= 0);
  CHECK(SSL_get_error(client.get(), ret) == SSL_ERROR_WANT_READ);
}

TEST_CASE_FIXTURE(tls_cluster,
                  "a TLS node reads a connection until OpenSSL wants the socket; a plain one "
                  "keeps CAF's bound") {
  options o;
  o.tls_ca = dir / "good/ca.pem";
  o.tls_cert = dir / "good/127.0.0.1.pem";
  o.tls_key = dir / "good/127.0.0.1.key";
  const model_layout seed = mlp_spec{}.layout("mlp");
  node_config with_tls{o, seed};
  CHECK(caf::get_or(with_tls, "middleman.max-consecutive-reads", std::size_t{0}) ==
        tls_consecutive_reads);
  node_config plain{options{}, seed};
  CHECK(caf::get_or(plain, "middleman.max-consecutive-reads", std::size_t{50}) == 50);
}

// Before the fixes in runtime/net/tls_guard.*, this cluster lost connections when
// a stranger knocked, and its job never ended (the end at the last step over
// TLS: the forged client's test below).
TEST_CASE_FIXTURE(long_tls_cluster,
                  "a TLS cluster of 2 ps and 2 workers trains on while strangers are refused and "
                  "logged, and stops cleanly on SIGTERM") {
  two_by_two nodes(c, dir, tls("good", "good"));
  auto& [ps0, ps1, chief, w1] = nodes;
  REQUIRE(chief.wait_for_output("global_step:", 120s));  // training has begun

  process foreign(stranger(tls("foreign", "foreign")), dir / "foreign.log");
  process impostor(stranger(tls("good", "foreign")), dir / "impostor.log");
  process plain(stranger({}), dir / "plain.log");
  // status says why it cannot reach the chief, at once rather than after
  // --connect-timeout, and for a port where nothing listens (side by side
  // with the strangers: the job must still be running when all have knocked).
  const std::string chief_port = std::to_string(first_port(c.workers));
  auto status_args = [&](std::vector<std::string> options, const std::string& chief) {
    options.insert(options.begin(), {DOWNPOUR_BINARY, "status", "--chief=" + chief});
    return options;
  };
  process status_foreign(status_args(tls("foreign", "foreign"), "127.0.0.1:" + chief_port),
                         dir / "status-foreign.log");
  process status_impostor(status_args(tls("good", "foreign"), "127.0.0.1:" + chief_port),
                          dir / "status-impostor.log");
  const port_reservation closed(1);
  process status_nobody(
      status_args({"--connect-timeout=1"}, "127.0.0.1:" + std::to_string(closed[0])),
      dir / "status-nobody.log");
  for (auto* p : {&foreign, &impostor, &plain, &status_foreign, &status_impostor, &status_nobody}) {
    CAPTURE(p->output());
    CHECK(p->wait(60s) == 1);
  }
  for (auto* p : {&foreign, &impostor, &plain})
    CHECK(p->output().find("cannot reach ps 0 at 127.0.0.1:") != std::string::npos);
  // Our side of a refused handshake says why (CAF alone ends it as a timeout).
  CHECK(foreign.output().find("the TLS handshake failed: its certificate is not from this "
                              "cluster's CA") != std::string::npos);
  CHECK(impostor.output().find("the TLS handshake failed: it does not accept our certificate, "
                               "so it trusts another CA") != std::string::npos);
  CHECK(status_foreign.output() ==
        "downpour: error: cannot reach the chief at 127.0.0.1:" + chief_port +
            ": the TLS handshake failed: its certificate is not from this cluster's CA "
            "(self-signed certificate in certificate chain)\n");
  CHECK(status_impostor.output().find(": the TLS handshake failed: it does not accept our "
                                      "certificate, so it trusts another CA (tlsv1 alert unknown "
                                      "ca)\n") != std::string::npos);
  CHECK(status_nobody.output().find(
            "within 1 s: nothing listens on that port (connection refused)") != std::string::npos);
  CHECK(plaintext_client_is_closed(first_port(c.ps), scaled(10000ms)));
  CHECK(plaintext_client_is_closed(first_port(c.workers), scaled(10000ms)));
  CHECK(client_without_certificate_is_refused(first_port(c.ps),
                                              scaled(10000ms)));
  // The cluster trains on after the last of them was refused.
  const auto knocked = chief.output().size();
  REQUIRE(chief.wait_until(
      [&](const std::string& out) { return out.find("global_step:", knocked) != std::string::npos; },
      120s));
  chief.kill(SIGTERM);
  for (auto* p : nodes.all()) {
    CAPTURE(p->output());
    CHECK(p->wait(300s) == exit_stopped);
  }
  CHECK(stopped_step(chief.output()) > 0);
  auto ps_log = ps0.output();
  CAPTURE(ps_log);
  const std::string refused = "downpour: refused a TLS connection from 127.0.0.1:";
  CHECK(ps_log.find(refused) != std::string::npos);
  CHECK(ps_log.find("it does not accept our certificate, so it trusts another CA") !=
        std::string::npos);
  CHECK(ps_log.find("its certificate is not from this cluster's CA") != std::string::npos);
  CHECK(ps_log.find("it does not speak TLS (wrong version number)") != std::string::npos);
  CHECK(ps_log.find("it does not speak TLS (http request)") != std::string::npos);
  CHECK(ps_log.find("it sent no certificate (peer did not return a certificate)") !=
        std::string::npos);
  CHECK(chief.output().find(refused) != std::string::npos);
  // Its last attempt usually ends in disconnect_during_handshake, which gets
  // the hint; once in about 15 runs under heavy load it ended otherwise.
  WARN_MESSAGE(plain.output().find("do both sides use TLS") != std::string::npos, plain.output());
}

// A certificate of the cluster's CA gets a stranger through TLS, and CAF's
// listening side checks nothing more: the ps itself refuses what a node of
// another cluster (another --cluster-name) sends.
TEST_CASE_FIXTURE(tls_cluster,
                  "over TLS, a forged BASP client with a valid certificate but another "
                  "--cluster-name cannot control a ps; the job ends exactly") {
  two_by_two nodes(c, dir, tls("good", "good"));
  auto& [ps0, ps1, chief, w1] = nodes;
  REQUIRE(chief.wait_for_output("global_step:", 120s));  // training has begun
  options theirs;
  theirs.cluster_name = "green";
  theirs.tls_ca = dir / "good/ca.pem";
  theirs.tls_cert = dir / "good/127.0.0.1.pem";
  theirs.tls_key = dir / "good/127.0.0.1.key";
  testing::forged_client stranger(theirs, "downpour");
  testing::attack_shard(stranger,
                        stranger.connect<shard_actor>(first_port(c.ps)),
                        "cluster-name=green here but cluster-name=downpour at ps 0");
  WARN_MESSAGE(!chief.wait_for_output("final:", 0s), "the job ended before the attack was over");
  for (auto* p : nodes.all()) {
    CAPTURE(p->output());
    CHECK(p->wait(300s) == 0);
  }
  CHECK(chief.output().find("final: global_step=2000 ") != std::string::npos);
  CHECK(ps0.output().find("refused a stop from node ") != std::string::npos);
}

TEST_CASE("an expired certificate is called expired, not foreign") {
  CHECK(certificate_fault(X509_V_ERR_CERT_HAS_EXPIRED) ==
        "its certificate has expired (certificate has expired)");
  CHECK(certificate_fault(X509_V_ERR_CERT_NOT_YET_VALID).rfind("its certificate is not valid yet", 0) == 0);
  CHECK(certificate_fault(X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY)
            .rfind("its certificate is not from this cluster's CA", 0) == 0);
}

TEST_CASE("a peer that closed every handshake gets a hint about TLS and CAs") {
  CHECK(handshake_hint(caf::sec::disconnect_during_handshake).find("do both sides use TLS") !=
        std::string::npos);
  // No TCP connect at all (a name that does not resolve yet): no word of TLS.
  const auto unconnected = handshake_hint(caf::sec::cannot_connect_to_node);
  CHECK(unconnected.find("TLS") == std::string::npos);
  CHECK(unconnected.find("the name does not resolve") != std::string::npos);
}

}  // namespace test_tls
