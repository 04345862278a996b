// Fuzzes the options parser (config/*.cpp): parse_options on an INI file or on
// a command line made from the input.
//
// The first byte picks the mode (fuzz/corpus/fuzz_config holds examples):
//   even (e.g. '\n'): the rest is an INI file; parsed as `downpour --config FILE`.
//   odd  (e.g. '!'):  the rest is split on NUL bytes into argv[1..]; an argument
//                     "@ini" is replaced by the path of a fixed, valid INI file
//                     (examples/cluster_async.ini's settings), so --config and the
//                     command line's precedence over the file are reached.
// An argv argument containing '/' is rejected (return -1): --config and the TLS
// options name files, and the fuzzer must not make the parser read /dev/zero or
// block on /dev/stdin. Relative names can only reach ordinary files and
// directories of the working directory, which is harmless.
//
// A config_error is the parser's answer to bad input and is fine; any other
// exception, a crash, a sanitizer report or a leak is a bug.
#include <sstream>
#include <vector>

#include "config/options.hpp"
#include "fuzz/fuzz_common.hpp"

namespace {

using downpour::config_error;

constexpr const char* target = "fuzz_config";

const std::string& fixed_ini() {
  static const std::string path = [] {
    std::string p = fuzz::scratch_path("fixed.ini");
    fuzz::write_file(p,
                     "[downpour]\n"
                     "ps-hosts = 127.0.0.1:1111,127.0.0.1:1112\n"
                     "worker-hosts = 127.0.0.1:2222,127.0.0.1:2223\n"
                     "mode = async\n"
                     "placement = balanced\n"
                     "last-step = 20000\n"
                     "batch-size = 100\n"
                     "checkpoint-dir = logs/log_async\n");
    return p;
  }();
  return path;
}

void parse(const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);
  std::ostringstream out;
  try {
    auto o = downpour::parse_options(static_cast<int>(args.size()), argv.data(), out);
    if (!o && out.str().empty()) fuzz::broken(target, "nullopt without printing help or version");
    if (o) {
      // What build_options promises the rest of the program.
      if (o->batch_size < 1 || o->hidden_units.empty() || o->last_step < 1 || o->log_every < 1 ||
          o->keep_checkpoints < 1 || o->lr_decay_steps < 1 || o->scheduler_threads > 256 ||
          o->ps_hosts.empty() || o->worker_hosts.empty() || !(o->learning_rate > 0) ||
          !(o->lr_decay_rate > 0 && o->lr_decay_rate <= 1) ||
          !(o->ema_decay >= 0 && o->ema_decay < 1) || !(o->l2 >= 0) ||
          !(o->node_timeout_s > 0) || !(o->heartbeat_interval_s >= 0))
        fuzz::broken(target, "parse_options returned options outside their documented ranges");
      if ((o->role == downpour::role_kind::ps && o->task >= o->ps_hosts.size()) ||
          (o->role == downpour::role_kind::worker && o->task >= o->worker_hosts.size()))
        fuzz::broken(target, "parse_options accepted a task outside its host list");
    }
  } catch (const config_error& e) {
    const std::string what = e.what();
    if (what.empty()) fuzz::broken(target, "empty config_error message");
  } catch (const std::exception& e) {
    fuzz::broken(target, std::string("parse_options threw a non-config_error: ") + e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return -1;
  const std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    static const std::string ini = fuzz::scratch_path("fuzz.ini");
    fuzz::write_file(ini, rest);
    parse({"downpour", "--config", ini});
    return 0;
  }
  std::vector<std::string> args{"downpour"};
  std::size_t begin = 0;
  while (begin <= rest.size()) {
    std::size_t end = rest.find('\0', begin);
    if (end == std::string::npos) end = rest.size();
    std::string arg = rest.substr(begin, end - begin);
    if (arg.find('/') != std::string::npos) return -1;
    if (arg == "@ini") arg = fixed_ini();
    // A --config=@ini spelling too.
    if (auto at = arg.find("=@ini"); at != std::string::npos && at + 5 == arg.size())
      arg = arg.substr(0, at + 1) + fixed_ini();
    args.push_back(std::move(arg));
    begin = end + 1;
  }
  parse(args);
  return 0;
}
