// The option table and --help. Defaults are printed from a default-constructed
// options, so the help cannot drift from the struct.
#include "config/option_table.hpp"

#include <sstream>

namespace downpour {
namespace config_detail {
namespace {

template <class T>
std::string text_of(const T& value) {
  std::ostringstream s;
  s << value;
  return s.str();
}

std::vector<option_spec> file_and_model_specs(const options& d) {
  return {
      {"config", "FILE", "",
       "INI file of name = value lines using these long names "
       "(optional [downpour] section); the command line and the environment win"},
      {"data-dir", "DIR", d.data_dir, "directory holding the MNIST IDX files"},
      {"data-format", "F", to_string(d.data_format),
       "idx (the MNIST files in --data-dir), csv, libsvm or criteo (--train-file and "
       "--test-file), or a format whose reader the program registered"},
      {"train-file", "FILES", "",
       "csv, libsvm, criteo: the training examples, one per line (csv: numbers; libsvm: label "
       "index:value ...; criteo: label, I1..I13, C1..C26 tab-separated); comma-separated "
       "files and globs (train-*.gz), gzip or plain"},
      {"test-file", "FILES", "", "csv, libsvm, criteo: the test examples, as --train-file"},
      {"csv-label", "COL", to_string(d.csv_label),
       "csv: the column holding the integer class label: first or last"},
      {"input", "HOW", to_string(d.input),
       "memory (the whole training set, TF's next_batch) or stream (blocks read in the "
       "background, each worker its share of the files); auto: stream for libsvm and criteo"},
      {"shuffle-buffer", "N", text_of(d.shuffle_buffer),
       "streamed: examples shuffled at once (files and blocks are shuffled too); 1: none"},
      {"passes", "N", text_of(d.passes),
       "streamed: stop after N passes over the training files (or at --last-step, whichever "
       "is first); 0: no limit"},
      {"max-line-bytes", "N", text_of(d.max_line_bytes),
       "libsvm, criteo and streamed csv: the longest line read; a longer one is refused"},
      {"checkpoint-dir", "DIR", d.checkpoint_dir, "where checkpoints and logs are written"},
      {"validation-size", "N", text_of(d.validation_size),
       "training images held out for validation"},
      {"batch-size", "N", text_of(d.batch_size), "examples per training step"},
      {"model", "NAME", d.model,
       "the model: mlp (ReLU hidden layers), softmax (no hidden layer), cnn, on libsvm or "
       "criteo data logreg (hashed-feature logistic regression) or fm (factorization "
       "machine), on criteo data dlrm or wide_deep (a table per field, docs/models.md)"},
      {"hidden-units", "LIST", to_string(d.hidden_units),
       "mlp, wide_deep's deep part: units of each hidden layer, comma-separated (500,300: two "
       "layers)"},
      {"sparse-rows", "N", text_of(d.sparse_rows),
       "logreg, fm: rows of the sparse variable the feature indices are hashed into; dlrm, "
       "wide_deep: rows of each field's table (1 to 2^62)"},
      {"fm-factors", "K", text_of(d.fm_factors),
       "fm: factors per feature (each row holds a weight and K factors)"},
      {"embedding-dim", "D", text_of(d.embedding_dim),
       "dlrm, wide_deep: width of each field's embedding (1 to 1024)"},
      {"bottom-units", "LIST", to_string(d.bottom_units),
       "dlrm: units of the bottom MLP's hidden layers, before its last layer of D"},
      {"top-units", "LIST", to_string(d.top_units),
       "dlrm: units of the top MLP's hidden layers, before its logit"},
      {"sparse-optimizer", "OPT", to_string(d.sparse_optimizer),
       "update of a sparse variable's rows: sgd or adagrad (TF's AdagradOptimizer, "
       "accumulators from 0.1, kept per row on the shard)"},
      {"learning-rate", "X", text_of(d.learning_rate), "initial learning rate"},
      {"lr-decay-rate", "X", text_of(d.lr_decay_rate),
       "learning-rate factor per lr-decay-steps (exponential decay)"},
      {"lr-decay-steps", "N", text_of(d.lr_decay_steps), "global steps per decay period"},
      {"lr-staircase", "", d.lr_staircase ? "true" : "false",
       "decay at whole periods only (switch; lr-staircase = true|false in a file)"},
      {"l2", "X", text_of(d.l2), "L2 regularization weight"},
      {"ema-decay", "X", text_of(d.ema_decay),
       "decay of the moving average of the weights used for evaluation"},
      {"last-step", "N", text_of(d.last_step), "stop when the global step reaches N"},
      {"seed", "N", text_of(d.seed), "random seed for initialization and shuffling"},
      {"log-every", "N", text_of(d.log_every), "log progress every N steps"},
      {"quiet", "", d.quiet ? "true" : "false",
       "no periodic status lines (switch; quiet = true|false in a file)"},
      {"save-checkpoint-secs", "SEC", text_of(d.save_checkpoint_secs),
       "seconds between checkpoints; 0 turns timed checkpoints off"},
      {"save-checkpoint-steps", "N", text_of(d.save_checkpoint_steps),
       "global steps between checkpoints; 0 turns them off"},
      {"keep-checkpoints", "N", text_of(d.keep_checkpoints), "newest checkpoints kept"},
      {"fresh", "", d.fresh ? "true" : "false",
       "start from step 0 although --checkpoint-dir holds an earlier run: its files are moved "
       "into a before-fresh-TIME subdirectory, never deleted (switch)"},
      {"max-bad-batches", "N", text_of(d.max_bad_batches),
       "batches with a non-finite loss or gradient skipped before the job fails as diverged; "
       "0: the first one fails it"},
      {"checkpoint", "FILE", "",
       "eval, inspect, export: the checkpoint file (default: newest in --checkpoint-dir)"},
      {"out", "FILE", "", "export: the .npz file to write"},
      {"ema", "", d.export_ema ? "true" : "false",
       "export: write the moving averages instead of the raw weights (switch)"},
  };
}

std::vector<option_spec> cluster_specs(const options& d) {
  return {
      {"role", "ROLE", to_string(d.role),
       "local (whole cluster in this process), ps, worker or reference"},
      {"task", "N", text_of(d.task), "index of this process in its role's host list"},
      {"join", "HOST:PORT", "",
       "worker: join the running job of the chief at HOST:PORT (not in --worker-hosts; the "
       "chief assigns the task index; refused for streamed input)"},
      {"ps-hosts", "LIST", to_string(d.ps_hosts), "parameter servers, comma-separated host:port ([addr]:port for IPv6)"},
      {"worker-hosts", "LIST", to_string(d.worker_hosts), "workers, comma-separated host:port ([addr]:port for IPv6)"},
      {"mode", "MODE", to_string(d.mode),
       "async (Downpour), sync (aggregate replicas per step) or ssp (bounded staleness)"},
      {"replicas-to-aggregate", "N", text_of(d.replicas_to_aggregate),
       "gradients per sync step; 0 means one per worker"},
      {"staleness", "S", text_of(d.staleness),
       "ssp: how many steps a worker may run ahead of the slowest live worker"},
      {"trainers", "K", text_of(d.trainers),
       "trainers per worker process, each with its own batches (worker index task*K + t); "
       "their pulls and pushes to a shard travel merged, a key pulled by several once"},
      {"ps-replicas", "R", text_of(d.ps_replicas),
       "copies of each shard on distinct ps tasks (at most the number of --ps-hosts); an "
       "update is acknowledged once every live copy applied it"},
      {"placement", "P", to_string(d.placement),
       "variables to ps tasks: balanced (by size) or round-robin"},
      {"transport", "T", to_string(d.transport), "inproc (one process) or tcp"},
      {"pipeline", "on|off", d.pipeline ? "on" : "off",
       "async: pull the next parameters while this step computes (they miss this step's own "
       "push; hides the transfer); with a row variable, in ssp, the next batch's rows; off: 1 "
       "worker reproduces the reference trainer bit for bit"},
      {"ticket-lease", "L", text_of(d.ticket_lease),
       "async, ssp: step tickets a worker takes from the chief at a time (1 to 4096), so the "
       "chief answers one request per L steps; unused ones go back, the job still ends at "
       "exactly --last-step; 1: one request per step"},
      {"wire-dtype", "T", to_string(d.wire),
       "pushes and pulls between nodes as fp32 (exact) or bf16 (half the bytes, 8-bit "
       "mantissa); in-process messages stay fp32"},
      {"connect-timeout", "SEC", text_of(d.connect_timeout_s),
       "seconds to wait for cluster peers (their names to resolve, the nodes to answer), and "
       "for a lost ps or chief to be started again; 300 when TF_CONFIG gives the cluster"},
      {"stop-grace", "SEC", text_of(d.stop_grace_s),
       "seconds a stop (SIGTERM, SIGINT) may take: past them the node exits 4 with the "
       "checkpoints saved so far (keep it below the orchestrator's grace period)"},
      {"scheduler-policy", "P", d.scheduler_policy, "CAF scheduler: sharing or stealing"},
      {"scheduler-threads", "N", text_of(d.scheduler_threads),
       "CAF scheduler threads; 0 means min(hardware threads, 4), at least 2 and at least "
       "one more than the node's workers"},
      {"bind", "ADDR", "",
       "address to listen on (default: the host of this node's own host-list entry when it "
       "is an address or localhost, every interface when it is a name, as a Kubernetes "
       "Service's; 0.0.0.0 for every IPv4 interface, :: for every IPv6 one)"},
      {"cluster-name", "NAME", d.cluster_name,
       "cluster identity: nodes of another cluster (or Downpour version) are refused"},
      {"cluster-secret-file", "FILE", "",
       "a secret shared by every node (16 to 4096 bytes): a hello must prove it holds it, "
       "answering a fresh challenge, so a captured hello admits no one"},
      {"heartbeat-interval", "SEC", text_of(d.heartbeat_interval_s),
       "seconds between heartbeats to peers; 0 turns them off"},
      {"node-timeout", "SEC", text_of(d.node_timeout_s),
       "a peer silent this long is treated as dead (a hung node); > 2 x heartbeat-interval"},
      {"tls-ca", "FILE", "", "CA certificate of the cluster: turns on mutual TLS (with --tls-cert, --tls-key)"},
      {"tls-cert", "FILE", "", "this node's certificate, signed by --tls-ca"},
      {"tls-key", "FILE", "", "this node's private key"},
      {"tls-passphrase", "TEXT", "", "passphrase of an encrypted --tls-key"},
      {"eval-every", "N", text_of(d.eval_every),
       "global steps between evaluations on the validation split (chief); 0 turns them off"},
      {"metrics", "FILE", "", "plot: the metrics.csv to draw (default: metrics.csv in --checkpoint-dir)"},
      {"log-level", "LEVEL", to_string(d.log_threshold),
       "error, warn, info or debug: lines below it are not printed; errors and warnings go "
       "to stderr, the rest to stdout"},
      {"log-format", "F", to_string(d.log_format),
       "text (time node LEVEL message) or json (one object per line with the fields time, "
       "node, level, message; for log shippers)"},
      {"chief", "HOST:PORT", "", "status: the chief to ask (default: the first --worker-hosts entry)"},
      {"json", "", d.status_json ? "true" : "false",
       "status: print one JSON object (fields in docs/operations.md) instead of text (switch)"},
      {"metrics-port", "PORT", text_of(d.metrics_port),
       "every node: serve Prometheus /metrics and /healthz over HTTP on PORT; 0 turns it off"},
      {"metrics-bind", "ADDR", d.metrics_bind,
       "address of the metrics endpoint (plain HTTP: keep it on loopback or a private network)"},
      {"help", "", "", "print this help and exit"},
      {"version", "", "", "print the version and exit"},
  };
}

void append_line(std::string& text, const std::string& left, const std::string& help) {
  constexpr std::size_t column = 32;
  std::string line = "  " + left;
  line.append(line.size() < column ? column - line.size() : 1, ' ');
  text += line + help + "\n";
}

}  // namespace

std::vector<option_spec> option_specs() {
  const options defaults;
  auto specs = file_and_model_specs(defaults);
  auto cluster = cluster_specs(defaults);
  specs.insert(specs.end(), cluster.begin(), cluster.end());
  return specs;
}

std::vector<alias_spec> alias_specs() {
  return {{"job_name", "role", "ps|worker"},
          {"task_id", "task", "N"},
          {"ps_hosts", "ps-hosts", "LIST"},
          {"worker_hosts", "worker-hosts", "LIST"}};
}

std::string label(const raw_value& v, const std::string& name) {
  if (v.source == environment_source) return v.spelled;
  if (v.source == tf_config_source) return "TF_CONFIG " + v.spelled;
  return v.source.empty() ? "--" + name : v.source + ": " + name;
}

}  // namespace config_detail

std::string help_text() {
  std::string text =
      "Usage: downpour [COMMAND] [options]\n\n"
      "Commands (and the options of each; the cluster and TLS options let status reach a "
      "chief):\n"
      "  train (default)   run the job in the --role given (every option but those below)\n"
      "  eval              test accuracy of a checkpoint, raw and EMA, per class\n"
      "                    (--checkpoint or --checkpoint-dir, the data and model options)\n"
      "  inspect           a checkpoint's metadata and checksum\n"
      "                    (--checkpoint or --checkpoint-dir)\n"
      "  export            a checkpoint's weights as a NumPy .npz\n"
      "                    (--out, --ema, --checkpoint or --checkpoint-dir)\n"
      "  status            ask a running chief for its job's state\n"
      "                    (--chief, --json, --connect-timeout, --cluster-name, --tls-*)\n"
      "  plot              draw a job's metrics.csv as a PNG with gnuplot\n"
      "                    (--out, --metrics or --checkpoint-dir)\n\n"
      "Options:\n";
  for (const auto& spec : config_detail::option_specs()) {
    std::string left = "--" + spec.name + (spec.arg.empty() ? "" : " " + spec.arg);
    std::string help = spec.help;
    if (!spec.default_text.empty()) help += " (default: " + spec.default_text + ")";
    config_detail::append_line(text, left, help);
  }
  text +=
      "\nTensorFlow flag names (same meaning; giving both with different values is an "
      "error):\n";
  for (const auto& alias : config_detail::alias_specs())
    config_detail::append_line(text, "--" + alias.name + " " + alias.arg,
                               "same as --" + alias.canonical);
  text +=
      "\nEnvironment (the command line wins over it, it wins over the --config file):\n"
      "  DOWNPOUR_<OPTION>   any option, e.g. DOWNPOUR_BATCH_SIZE=50, DOWNPOUR_LR_STAIRCASE=true\n"
      "  TF_CONFIG           TensorFlow's cluster JSON: sets --role, --task, --ps-hosts and\n"
      "                      --worker-hosts (a chief task is worker 0; DOWNPOUR_* wins over it)\n";
  return text;
}

}  // namespace downpour
