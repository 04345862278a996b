// Hosts on a private network for partition tests: one network namespace per
// host, each with a veth link to a bridge that lives in a namespace of its
// own (the switch), so no interface, address or route is added outside the
// namespaces made here, and traffic between them never leaves them. A link
// is cut at the switch port (a pulled cable: the host keeps its address and
// routes, packets are dropped, no reset is sent). Needs root (CAP_NET_ADMIN)
// and `ip`; partition_net::make says why when it cannot be had.
#pragma once

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace downpour::testing {

class partition_net {
 public:
  // hosts namespaces named "dpnet<pid>x<k>" (and "dpnet<pid>sw"), unique per
  // test process, so parallel runs never share one. Stale ones of processes
  // that died without cleaning up are removed first. Empty, with why, when
  // namespaces cannot be made here.
  static std::unique_ptr<partition_net> make(std::size_t hosts, std::string& why) {
    const auto ip = find_ip();
    if (ip.empty()) {
      why = "no `ip` command (iproute2)";
      return nullptr;
    }
    remove_stale(ip);
    std::unique_ptr<partition_net> net{new partition_net(ip, hosts)};
    if (!net->build()) {
      why = "cannot make network namespaces, veth links and a bridge (needs root and "
            "CAP_NET_ADMIN): `" + net->failed_ + "` failed";
      return nullptr;
    }
    return net;
  }
  partition_net(const partition_net&) = delete;
  partition_net& operator=(const partition_net&) = delete;
  ~partition_net() {
    // Deleting a namespace deletes its end of each veth pair, and so the pair.
    for (std::size_t k = 0; k < hosts_; ++k) ip("netns delete " + host_ns(k));
    ip("netns delete " + switch_ns());
    std::error_code ec;
    for (std::size_t k = 0; k < hosts_; ++k) std::filesystem::remove_all(etc_of(k), ec);
  }

  // Host k's own /etc/hosts: `ip netns exec` mounts /etc/netns/NS/hosts over
  // /etc/hosts for the command it starts, so write it before starting one.
  // Written in place (the same file), so a running process sees new text at
  // its next lookup: names that resolve only after the nodes started.
  // No name server is asked meanwhile: the namespace's resolv.conf names
  // only its own loopback.
  void write_hosts(std::size_t k, const std::string& text) const {
    std::filesystem::create_directories(etc_of(k));
    if (!std::filesystem::exists(etc_of(k) + "/resolv.conf")) {
      std::FILE* r = std::fopen((etc_of(k) + "/resolv.conf").c_str(), "w");
      if (!r) throw std::runtime_error("cannot write " + etc_of(k) + "/resolv.conf");
      std::fputs("nameserver 127.0.0.1\n", r);
      std::fclose(r);
    }
    std::FILE* f = std::fopen((etc_of(k) + "/hosts").c_str(), "r+");
    if (!f) f = std::fopen((etc_of(k) + "/hosts").c_str(), "w");
    if (!f) throw std::runtime_error("cannot write " + etc_of(k) + "/hosts");
    std::fwrite(text.data(), 1, text.size(), f);
    std::fflush(f);
    if (::ftruncate(::fileno(f), static_cast<off_t>(text.size())) != 0) {
      std::fclose(f);
      throw std::runtime_error("cannot truncate " + etc_of(k) + "/hosts");
    }
    std::fclose(f);
  }

  // 10.200.0.(k+1): a private address that exists only inside these namespaces.
  std::string address(std::size_t k) const { return "10.200.0." + std::to_string(k + 1); }

  // args run inside host k's namespace (ip netns exec replaces itself with
  // args[0], so the process is the command itself).
  std::vector<std::string> on_host(std::size_t k, std::vector<std::string> args) const {
    args.insert(args.begin(), {ip_, "netns", "exec", host_ns(k)});
    return args;
  }

  // Host k's switch port down (its packets dropped both ways) or up again.
  void cut(std::size_t k) { require("-n " + switch_ns() + " link set p" + std::to_string(k) + " down"); }
  void heal(std::size_t k) { require("-n " + switch_ns() + " link set p" + std::to_string(k) + " up"); }

 private:
  partition_net(std::string ip, std::size_t hosts)
      : ip_(std::move(ip)), prefix_("dpnet" + std::to_string(::getpid())), hosts_(hosts) {}

  std::string host_ns(std::size_t k) const { return prefix_ + "x" + std::to_string(k); }
  std::string switch_ns() const { return prefix_ + "sw"; }
  std::string etc_of(std::size_t k) const { return "/etc/netns/" + host_ns(k); }

  bool build() {
    const std::string sw = "-n " + switch_ns() + " ";
    if (!try_all({"netns add " + switch_ns(), sw + "link add br0 type bridge",
                  sw + "link set br0 up"}))
      return false;
    for (std::size_t k = 0; k < hosts_; ++k) {
      const std::string port = "p" + std::to_string(k);
      const std::string host = "-n " + host_ns(k) + " ";
      if (!try_all({"netns add " + host_ns(k),
                    sw + "link add " + port + " type veth peer name eth0 netns " + host_ns(k),
                    sw + "link set " + port + " master br0", sw + "link set " + port + " up",
                    host + "addr add " + address(k) + "/24 dev eth0", host + "link set eth0 up",
                    host + "link set lo up"}))
        return false;
    }
    return true;
  }

  bool try_all(const std::vector<std::string>& commands) {
    for (const auto& c : commands)
      if (!ip(c)) {
        failed_ = "ip " + c;
        return false;
      }
    return true;
  }

  void require(const std::string& args) const {
    if (!ip(args)) throw std::runtime_error("`ip " + args + "` failed");
  }

  bool ip(const std::string& args) const { return run(ip_ + " " + args); }

  static bool run(const std::string& command) {
    return std::system((command + " >/dev/null 2>&1").c_str()) == 0;
  }

  static std::string find_ip() {
    for (const char* p : {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"})
      if (::access(p, X_OK) == 0) return p;
    return "";
  }

  // Namespaces "dpnet<pid>..." whose process is gone (a test that crashed).
  static void remove_stale(const std::string& ip) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/run/netns", ec)) {
      const auto name = entry.path().filename().string();
      if (name.rfind("dpnet", 0) != 0) continue;
      const auto pid = std::atol(name.c_str() + 5);
      if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
        run(ip + " netns delete " + name);
    }
  }

  std::string ip_, prefix_;
  std::size_t hosts_;
  std::string failed_;
};

}  // namespace downpour::testing
