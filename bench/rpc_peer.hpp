// PyTorch's RPC parameter server (../shared/peers/torch_ps.py, python3-torch),
// the peer the dense targets are measured against, run once.
#pragma once

#include <cstdio>
#include <iostream>
#include <memory>
#include <regex>
#include <string>

namespace downpour::bench {

// Global steps/s of the peer with `workers` workers, from its RESULT line;
// 0 (and its output on stderr) if it printed none.
inline double rpc_peer_steps_per_s(const std::string& script, std::size_t workers, long steps) {
  const std::string cmd = "/usr/bin/python3 " + script + " --workers " + std::to_string(workers) +
                          " --steps " + std::to_string(steps) + " 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  if (!pipe) return 0.0;
  std::string out;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, pipe.get())) out += buf;
  std::smatch m;
  if (!std::regex_search(out, m, std::regex("global steps/s[^=]*= ([0-9.]+)"))) {
    std::cerr << "no RESULT line from the PyTorch RPC peer (" << cmd << "):\n" << out;
    return 0.0;
  }
  return std::stod(m[1]);
}

}  // namespace downpour::bench
