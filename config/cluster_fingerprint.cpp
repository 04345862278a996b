#include "config/cluster_fingerprint.hpp"

#include <map>
#include <sstream>

#include "config/version.hpp"

namespace downpour {
namespace {

std::map<std::string, std::string> split_fingerprint(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ';')) {
    auto eq = item.find('=');
    if (eq != std::string::npos) out[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return out;
}

}  // namespace

std::string cluster_fingerprint(const options& o) {
  std::ostringstream out;
  out << "version=" << build_version() << ";cluster-name=" << o.cluster_name
      << ";cluster-secret=" << (o.cluster_secret.empty() ? "none" : "set") << ";ps-hosts=" << to_string(o.ps_hosts)
      << ";worker-hosts=" << to_string(o.worker_hosts) << ";mode=" << to_string(o.mode)
      << ";replicas-to-aggregate=" << o.replicas_to_aggregate
      << ";placement=" << to_string(o.placement) << ";wire-dtype=" << to_string(o.wire)
      << ";batch-size=" << o.batch_size << ";last-step=" << o.last_step
      << ";learning-rate=" << o.learning_rate << ";lr-decay-rate=" << o.lr_decay_rate
      << ";lr-decay-steps=" << o.lr_decay_steps << ";lr-staircase=" << o.lr_staircase
      << ";l2=" << o.l2 << ";ema-decay=" << o.ema_decay << ";seed=" << o.seed
      << ";sparse-rows=" << o.sparse_rows << ";fm-factors=" << o.fm_factors
      << ";sparse-optimizer=" << to_string(o.sparse_optimizer);
  if (o.trainers != 1) out << ";trainers=" << o.trainers;
  if (o.ps_replicas != 1) out << ";ps-replicas=" << o.ps_replicas;
  // How the workers share the training files (docs/input.md).
  if (streams_input(o))
    out << ";input=stream;shuffle-buffer=" << o.shuffle_buffer << ";passes=" << o.passes;
  return out.str();
}

std::optional<std::string> fingerprint_difference(const std::string& mine,
                                                  const std::string& theirs,
                                                  const std::string& peer) {
  if (mine == theirs) return std::nullopt;
  auto a = split_fingerprint(mine);
  auto b = split_fingerprint(theirs);
  for (const auto& [key, value] : a) {
    auto it = b.find(key);
    std::string other = it == b.end() ? "<unset>" : it->second;
    if (other != value) return key + "=" + value + " here but " + key + "=" + other + " at " + peer;
  }
  return "the cluster configs differ from " + peer;
}

}  // namespace downpour
