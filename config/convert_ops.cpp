// Options of failure detection, security, watching a job and transfer.
#include <filesystem>

#include "io/input_file.hpp"

#include "config/readers.hpp"

namespace downpour::config_detail {
namespace {

// Mutual TLS needs all three files; a partial setting must never fall back to
// anonymous TLS or plain TCP silently.
void check_tls(const options& o) {
  int given = !o.tls_ca.empty() + !o.tls_cert.empty() + !o.tls_key.empty();
  if (given != 0 && given != 3)
    throw config_error(
        "config: --tls-ca, --tls-cert and --tls-key go together (set all three or none)");
  if (!o.tls_passphrase.empty() && given == 0)
    throw config_error("config: --tls-passphrase needs --tls-ca, --tls-cert and --tls-key");
  for (const auto* file : {&o.tls_ca, &o.tls_cert, &o.tls_key}) {
    std::error_code ec;
    if (!file->empty() && !std::filesystem::is_regular_file(*file, ec))
      throw config_error("config: TLS file '" + *file + "' does not exist");
  }
}

// The secret is read once, whole: the file is what the operator keeps
// private (a Kubernetes Secret, chmod 600); one trailing newline is dropped,
// as `echo` and editors add one.
void check_secret_size(const std::string& path, std::uint64_t bytes) {
  if (bytes >= min_cluster_secret_bytes && bytes <= max_cluster_secret_bytes) return;
  throw config_error("config: --cluster-secret-file '" + path + "' holds " +
                     std::to_string(bytes) + " bytes; expected " +
                     std::to_string(min_cluster_secret_bytes) + " to " +
                     std::to_string(max_cluster_secret_bytes) +
                     " (e.g. head -c 32 /dev/urandom | base64 > FILE)");
}

std::string read_cluster_secret(const std::string& path) {
  std::string secret;
  try {
    const input_file file(path);
    if (file.size() > max_cluster_secret_bytes + 1) check_secret_size(path, file.size());
    secret = file.read_at(0, static_cast<std::size_t>(file.size()));
  } catch (const input_error& e) {
    throw config_error("config: --cluster-secret-file '" + path + "': " + e.reason());
  }
  if (!secret.empty() && secret.back() == '\n') secret.pop_back();
  check_secret_size(path, secret.size());
  return secret;
}

void check_timeouts(const options& o) {
  if (o.heartbeat_interval_s > 0 && o.node_timeout_s <= 2 * o.heartbeat_interval_s)
    throw config_error("config: --node-timeout=" + std::to_string(o.node_timeout_s) +
                       " must exceed twice --heartbeat-interval=" +
                       std::to_string(o.heartbeat_interval_s) +
                       " (expected a timeout that survives a late heartbeat)");
}

}  // namespace

options read_operations(options o, const raw_values& raw) {
  o.bind_address = read_text(raw, "bind", o.bind_address);
  if (find(raw, "bind")) o.bind_address = parse_address(o.bind_address, "--bind");
  o.cluster_name = read_text(raw, "cluster-name", o.cluster_name);
  o.cluster_secret_file = read_text(raw, "cluster-secret-file", o.cluster_secret_file);
  if (find(raw, "cluster-secret-file")) o.cluster_secret = read_cluster_secret(o.cluster_secret_file);
  // Kubeflow's operator starts a TFJob's pods minutes apart (scheduling,
  // image pulls): under TF_CONFIG the default wait for peers covers that.
  const raw_value* role = find(raw, "role");
  if (role && role->source == tf_config_source && !find(raw, "connect-timeout"))
    o.connect_timeout_s = tf_config_connect_timeout_s;
  o.heartbeat_interval_s =
      read_duration(raw, "heartbeat-interval", o.heartbeat_interval_s, duration_zero::turns_off);
  o.node_timeout_s =
      read_duration(raw, "node-timeout", o.node_timeout_s, duration_zero::refused);
  o.stop_grace_s =
      read_duration(raw, "stop-grace", o.stop_grace_s, duration_zero::refused);
  o.tls_ca = read_text(raw, "tls-ca", o.tls_ca);
  o.tls_cert = read_text(raw, "tls-cert", o.tls_cert);
  o.tls_key = read_text(raw, "tls-key", o.tls_key);
  o.tls_passphrase = read_text(raw, "tls-passphrase", o.tls_passphrase);
  o.eval_every = read_integer(raw, "eval-every", o.eval_every, 0);
  o.metrics_file = read_text(raw, "metrics", o.metrics_file);
  o.chief_address = read_text(raw, "chief", o.chief_address);
  o.status_json = read_flag(raw, "json", o.status_json);
  o.metrics_port = read_integer(raw, "metrics-port", o.metrics_port, 0, 65535);
  o.metrics_bind = read_text(raw, "metrics-bind", o.metrics_bind);
  o.log_format = read_choice(raw, "log-format", o.log_format,
                             {log_format_kind::text, log_format_kind::json});
  using L = log_level;
  o.log_threshold =
      read_choice(raw, "log-level", o.log_threshold, {L::error, L::warn, L::info, L::debug});
  if (const raw_value* v = find(raw, "chief")) parse_host_list(v->text, label(*v, "chief"));
  check_tls(o);
  check_timeouts(o);
  return o;
}

}  // namespace downpour::config_detail
