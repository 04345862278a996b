// Host lists: entries, IPv6 literals, --bind, task indexes, and two nodes
// on one address.
#include <doctest/doctest.h>

#include "config/options.hpp"
#include "parse_options.hpp"

namespace downpour::test_hosts {
namespace {

using testing::error_of;
using testing::parse;
using testing::temp_ini;

TEST_CASE("malformed host lists name the bad entry") {
  const std::string expected = "(expected host:port or [IPv6]:port with port 0-65535)";
  CHECK(error_of({"--ps-hosts=localhost"}) ==
        "config: --ps-hosts entry 'localhost' is malformed " + expected);
  CHECK(error_of({"--worker-hosts=a:1,b:65536"}) ==
        "config: --worker-hosts entry 'b:65536' is malformed " + expected);
  CHECK(error_of({"--worker-hosts=a:1,"}) ==
        "config: --worker-hosts entry '' is malformed " + expected);
  CHECK(error_of({"--ps-hosts="}) ==
        "config: --ps-hosts= has an empty value (expected --ps-hosts=VALUE)");
  CHECK(error_of({"--ps-hosts", " "}) ==
        "config: --ps-hosts is empty (expected a comma-separated list of host:port)");
  // An IPv6 address needs its brackets, or its last group would be read as the port.
  for (const char* entry : {"::1:2222", "[::1]", "[::1]2222", "[]:1", "[127.0.0.1]:1", "[::1:1",
                            "::1]:1", "[[::1]]:1", ":1"})
    CHECK(error_of({"--ps-hosts=" + std::string(entry)}) ==
          "config: --ps-hosts entry '" + std::string(entry) + "' is malformed " + expected);
}

TEST_CASE("IPv6 hosts are written in brackets and held without them") {
  const auto hosts = parse_host_list("a:1, [::1]:0,[fe80::1%lo]:2222,10.0.0.1:3", "--ps-hosts");
  REQUIRE(hosts.size() == 4);
  CHECK(hosts[1].host == "::1");
  CHECK(hosts[1].port == 0);
  CHECK(hosts[2].host == "fe80::1%lo");
  CHECK(hosts[3].host == "10.0.0.1");
  CHECK(to_string(hosts) == "a:1,[::1]:0,[fe80::1%lo]:2222,10.0.0.1:3");
  const auto o = parse({"--role=worker", "--ps-hosts=[::1]:1111", "--worker-hosts=[::1]:2222,[::1]:2223",
                        "--chief=[::1]:2222"});
  CHECK(o.ps_hosts.at(0).host == "::1");
  CHECK(to_string(o.worker_hosts) == "[::1]:2222,[::1]:2223");
  CHECK(parse_host_list(o.chief_address, "--chief").at(0).port == 2222);
}

TEST_CASE("--bind takes an address with or without brackets, never a port") {
  CHECK(parse({"--bind=[::1]"}).bind_address == "::1");
  CHECK(parse({"--bind=::"}).bind_address == "::");
  CHECK(parse({"--bind=0.0.0.0"}).bind_address == "0.0.0.0");
  CHECK(parse({"--bind=node-1.example"}).bind_address == "node-1.example");
  const std::string expected =
      " is malformed (expected a host name, an IPv4 address or an IPv6 address, without a port)";
  CHECK(error_of({"--bind=[::1]:80"}) == "config: --bind=[::1]:80" + expected);
  CHECK(error_of({"--bind=10.0.0.1:80"}) == "config: --bind=10.0.0.1:80" + expected);
  CHECK(error_of({"--bind=a b"}) == "config: --bind=a b" + expected);
}

TEST_CASE("the task must index its role's host list") {
  CHECK(error_of({"--role=worker", "--task=2"}) ==
        "config: --task=2 is out of range (expected an integer from 0 to 1 for 2 --worker-hosts)");
  CHECK(error_of({"--role=ps", "--task=1", "--ps-hosts=a:1"}) ==
        "config: --task=1 is out of range (expected an integer from 0 to 0 for 1 --ps-hosts)");
  CHECK(parse({"--role=local", "--task=5"}).task == 5);
  CHECK(error_of({"--ps-replicas=3", "--ps-hosts=a:1,b:2"}) ==
        "config: --ps-replicas=3 is out of range (expected an integer from 1 to 2 for 2 --ps-hosts)");
  CHECK(error_of({"--ps-replicas=0"}) ==
        "config: --ps-replicas=0 is out of range (expected an integer from 1 to 64)");
  CHECK(parse({"--ps-replicas=2"}).ps_replicas == 2);
  CHECK(parse({"--role=ps", "--ps-replicas=2"}).ps_replicas == 2);
  CHECK(error_of({"--role=ps", "--ps-replicas=3", "--ps-hosts=a:1,b:2,c:3"}) ==
        "config: --ps-replicas=3 is not served here (expected 1 or 2 for ps and worker processes "
        "(a ps keeps one backup))");
  CHECK(parse({"--ps-replicas=3", "--ps-hosts=a:1,b:2,c:3"}).ps_replicas == 3);
  CHECK(error_of({"--transport=tcp", "--ps-replicas=2"}) ==
        "config: --ps-replicas=2 is not served here (expected 1 with --transport=tcp (--role=local "
        "keeps its backups in process))");
  CHECK(parse({}).ps_replicas == 1);
  // More gradients per step than workers is TensorFlow's "several batches per update".
  CHECK(parse({"--replicas-to-aggregate=3"}).replicas_to_aggregate == 3);
}

TEST_CASE("two nodes on one host:port are refused after resolving names, naming both entries") {
  const std::vector<std::string> ps = {"--role=ps", "--worker-hosts=127.0.0.1:3000"};
  auto with = [&](std::string hosts) {
    auto args = ps;
    args.push_back(std::move(hosts));
    return error_of(args);
  };
  CHECK(with("--ps-hosts=127.0.0.1:2000,127.0.0.1:2000") ==
        "config: --ps-hosts entry 127.0.0.1:2000 (ps 1) is the same address as --ps-hosts entry "
        "127.0.0.1:2000 (ps 0) (expected its own host:port for every ps and worker)");
  CHECK(
      with("--ps-hosts=127.0.0.1:2000,LocalHost:2000")
          .find("config: --ps-hosts entry LocalHost:2000 (ps 1) is the same address as --ps-hosts "
                "entry 127.0.0.1:2000 (ps 0)") == 0);
  CHECK(with("--ps-hosts=127.0.0.1:3000")
            .find("config: --worker-hosts entry 127.0.0.1:3000 (worker 0) is the same address as "
                  "--ps-hosts entry 127.0.0.1:3000 (ps 0)") == 0);
  // An unresolvable name still clashes with itself.
  CHECK(with("--ps-hosts=nowhere.invalid:2000,NOWHERE.invalid:2000")
            .find("(ps 1) is the same address as --ps-hosts entry nowhere.invalid:2000") !=
        std::string::npos);
  temp_ini ini("dup-hosts", "ps-hosts = 127.0.0.1:2000,127.0.0.1:2000\n");
  CHECK(with("--config=" + ini.str()).find("config: " + ini.str() + ": ps-hosts entry") == 0);
  // Distinct ports, port 0 (ephemeral) and a local job are fine.
  CHECK(parse({"--role=ps", "--ps-hosts=127.0.0.1:2000,localhost:2001",
               "--worker-hosts=127.0.0.1:3000"})
            .ps_hosts.size() == 2);
  CHECK(parse({"--role=worker", "--ps-hosts=127.0.0.1:0,127.0.0.1:0", "--worker-hosts=127.0.0.1:0"})
            .ps_hosts.size() == 2);
  CHECK(parse({"--ps-hosts=127.0.0.1:2000,127.0.0.1:2000"}).ps_hosts.size() == 2);
}

}  // namespace
}  // namespace downpour::test_hosts
