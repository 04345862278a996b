// Text -> typed options, with one-line errors naming the option, the bad value
// and what was expected. Ranges are checked here and nowhere else, so the rest
// of the program can trust an options value.
#include "config/readers.hpp"

namespace downpour {
namespace config_detail {
namespace {

// An IDX file counts its examples in 32 bits: no data set holds more, so a
// larger batch or validation split is refused before any data is read.
constexpr long long max_examples = 4294967295LL;
// Rows are keys below N on the wire and in checkpoints; 2^62 leaves room
// below the row store's 2^63 (model/sparse_table.hpp).
constexpr long long max_sparse_rows = 1LL << 62;
// A factor row travels whole with every pull: beyond this it is no longer sparse.
constexpr long long max_fm_factors = 1024;
// A worker that dies holding a lease costs its shards that many steps again at most.
constexpr long long max_ticket_lease = 4096;

options read_files_and_model(options o, const raw_values& raw, const known_formats& formats) {
  o.config_file = read_text(raw, "config", o.config_file);
  o.data_dir = read_text(raw, "data-dir", o.data_dir);
  o = read_data_format(o, raw, formats);
  o.train_file = read_text(raw, "train-file", o.train_file);
  o.test_file = read_text(raw, "test-file", o.test_file);
  o.csv_label =
      read_choice(raw, "csv-label", o.csv_label, {csv_label_kind::first, csv_label_kind::last});
  o = read_input_options(o, raw);
  o.checkpoint_dir = read_text(raw, "checkpoint-dir", o.checkpoint_dir);
  o.validation_size = read_integer(raw, "validation-size", o.validation_size, 0, max_examples);
  o.model = read_word(raw, "model", o.model,
                      {"mlp", "softmax", "cnn", "logreg", "fm", "dlrm", "wide_deep"});
  o.hidden_units = read_sizes(raw, "hidden-units", o.hidden_units);
  o.sparse_rows = read_integer(raw, "sparse-rows", o.sparse_rows, 1, max_sparse_rows);
  o.fm_factors = read_integer(raw, "fm-factors", o.fm_factors, 1, max_fm_factors);
  o.embedding_dim = read_integer(raw, "embedding-dim", o.embedding_dim, 1, max_fm_factors);
  o.bottom_units = read_sizes(raw, "bottom-units", o.bottom_units);
  o.top_units = read_sizes(raw, "top-units", o.top_units);
  o.sparse_optimizer =
      read_choice(raw, "sparse-optimizer", o.sparse_optimizer,
                  {sparse_optimizer_kind::sgd, sparse_optimizer_kind::adagrad});
  o.batch_size = read_integer(raw, "batch-size", o.batch_size, 1, max_examples);
  o.learning_rate = read_real(raw, "learning-rate", o.learning_rate, positive);
  o.lr_decay_rate = read_real(raw, "lr-decay-rate", o.lr_decay_rate, decay_rate);
  o.lr_decay_steps = read_integer(raw, "lr-decay-steps", o.lr_decay_steps, 1);
  o.lr_staircase = read_flag(raw, "lr-staircase", o.lr_staircase);
  o.l2 = read_real(raw, "l2", o.l2, non_negative);
  o.ema_decay = read_real(raw, "ema-decay", o.ema_decay, ema_range);
  o.last_step = read_integer(raw, "last-step", o.last_step, 1);
  o.seed = read_seed(raw, o.seed);
  o.log_every = read_integer(raw, "log-every", o.log_every, 1);
  o.quiet = read_flag(raw, "quiet", o.quiet);
  o.save_checkpoint_secs =
      read_duration(raw, "save-checkpoint-secs", o.save_checkpoint_secs,
                    duration_zero::turns_off);
  o.save_checkpoint_steps = read_integer(raw, "save-checkpoint-steps", o.save_checkpoint_steps, 0);
  o.keep_checkpoints = read_integer(raw, "keep-checkpoints", o.keep_checkpoints, 1);
  o.fresh = read_flag(raw, "fresh", o.fresh);
  o.max_bad_batches = read_integer(raw, "max-bad-batches", o.max_bad_batches, 0);
  o.checkpoint_file = read_text(raw, "checkpoint", o.checkpoint_file);
  o.out_file = read_text(raw, "out", o.out_file);
  o.export_ema = read_flag(raw, "ema", o.export_ema);
  return o;
}

options read_cluster(options o, const raw_values& raw) {
  using R = role_kind;
  o.role = read_choice(raw, "role", o.role, {R::local, R::ps, R::worker, R::reference});
  o.task = read_integer(raw, "task", o.task, 0);
  o.ps_hosts = read_hosts(raw, "ps-hosts", o.ps_hosts);
  o.worker_hosts = read_hosts(raw, "worker-hosts", o.worker_hosts);
  if (const raw_value* v = find(raw, "join")) {
    const auto at = parse_host_list(v->text, label(*v, "join"));
    if (at.size() != 1)
      throw config_error("config: " + label(*v, "join") + " names " + std::to_string(at.size()) +
                         " addresses (expected the one HOST:PORT of the chief)");
    o.join = at[0];
  }
  o.mode = read_choice(raw, "mode", o.mode, {train_mode::async, train_mode::sync, train_mode::ssp});
  o.staleness = read_integer(raw, "staleness", o.staleness, 0);
  o.trainers = read_integer(raw, "trainers", o.trainers, 1, 64);
  o.ps_replicas = read_integer(raw, "ps-replicas", o.ps_replicas, 1, 64);
  o.replicas_to_aggregate = read_integer(raw, "replicas-to-aggregate", o.replicas_to_aggregate, 0);
  o.placement = read_choice(raw, "placement", o.placement,
                            {placement_kind::balanced, placement_kind::round_robin});
  o.transport =
      read_choice(raw, "transport", o.transport, {transport_kind::inproc, transport_kind::tcp});
  o.pipeline = read_flag(raw, "pipeline", o.pipeline);
  o.ticket_lease = read_integer(raw, "ticket-lease", o.ticket_lease, 1, max_ticket_lease);
  o.wire = read_choice(raw, "wire-dtype", o.wire, {wire_dtype::fp32, wire_dtype::bf16});
  o.connect_timeout_s =
      read_duration(raw, "connect-timeout", o.connect_timeout_s, duration_zero::refused);
  o.scheduler_policy =
      read_word(raw, "scheduler-policy", o.scheduler_policy, {"sharing", "stealing"});
  o.scheduler_threads = read_integer(raw, "scheduler-threads", o.scheduler_threads, 0, 256);
  return o;
}

std::vector<named_host> named_hosts(const options& o, const raw_values& raw) {
  std::vector<named_host> nodes;
  auto add = [&](const std::vector<host_port>& list, const std::string& name, const char* role) {
    const raw_value* v = find(raw, name);
    const std::string option = v ? label(*v, name) : "--" + name;
    for (std::size_t k = 0; k < list.size(); ++k)
      nodes.push_back({list[k], option, role + std::to_string(k)});
  };
  add(o.ps_hosts, "ps-hosts", "ps ");
  add(o.worker_hosts, "worker-hosts", "worker ");
  return nodes;
}

// Options that belong to another choice: given where they mean nothing,
// they are refused rather than silently ignored.
void check_data_and_model(const options& o, const raw_values& raw) {
  auto refuse_unless = [&](bool wanted, const std::string& name, const std::string& what) {
    if (const raw_value* v = find(raw, name); v && !wanted)
      throw config_error("config: " + label(*v, name) + " is for " + what);
  };
  const bool csv = o.data_format == data_format_kind::csv;
  const bool sparse =
      o.data_format == data_format_kind::libsvm || o.data_format == data_format_kind::criteo;
  // A registered format's reader may give sparse examples or dense ones.
  const bool registered = o.data_format == data_format_kind::registered;
  const bool files = csv || sparse || registered;
  for (const char* name : {"train-file", "test-file"})
    refuse_unless(files, name, "--data-format=csv, libsvm, criteo or a registered format");
  refuse_unless(csv, "csv-label", "--data-format=csv");
  refuse_unless(o.model != "softmax", "hidden-units", "--model=mlp (softmax has no hidden layer)");
  refuse_unless(o.model == "fm", "fm-factors", "--model=fm");
  const bool ctr = o.model == "dlrm" || o.model == "wide_deep";
  refuse_unless(ctr, "embedding-dim", "--model=dlrm or wide_deep");
  refuse_unless(o.model == "dlrm", "bottom-units", "--model=dlrm");
  refuse_unless(o.model == "dlrm", "top-units", "--model=dlrm");
  refuse_unless(o.model != "dlrm", "hidden-units",
                "--model=mlp or wide_deep (dlrm has --bottom-units and --top-units)");
  // eval reads only the test files.
  const bool trains = o.command != command_kind::eval;
  if (files && ((trains && o.train_file.empty()) || o.test_file.empty()))
    throw config_error("config: --data-format=" + data_format_name(o) + " needs " +
                       (trains ? "--train-file and --test-file" : "--test-file"));
  // The built-in sparse models hash sparse features; other data has none.
  if ((o.model == "logreg" || o.model == "fm") && !sparse && !registered)
    throw config_error("config: --model=" + o.model + " needs --data-format=libsvm or criteo");
  // The CTR models read each Criteo field into its own table.
  if (ctr && o.data_format != data_format_kind::criteo)
    throw config_error("config: --model=" + o.model + " needs --data-format=criteo");
  check_input(o, raw);
}

// Limits that depend on another option; the error names the option whose
// value is out of range and says which list bounds it.
void check_cluster(const options& o, const raw_values& raw) {
  auto value_of = [&](const std::string& name, std::size_t value) {
    const raw_value* v = find(raw, name);
    return v ? *v : raw_value{std::to_string(value), "", name};
  };
  if (const raw_value* v = find(raw, "join")) {
    if (o.role != role_kind::worker)
      throw config_error("config: " + label(*v, "join") + " needs --role=worker (got --role=" +
                         to_string(o.role) + ")");
    if (const raw_value* t = find(raw, "task"))
      throw config_error("config: " + label(*t, "task") +
                         " with --join (expected no --task: the chief assigns a joiner's index)");
  }
  if (o.role == role_kind::ps || o.role == role_kind::worker) {
    const bool ps = o.role == role_kind::ps;
    const std::size_t hosts = ps ? o.ps_hosts.size() : o.worker_hosts.size();
    if (o.task >= hosts)
      bad_value(value_of("task", o.task), "task", "is out of range",
                integer_expectation(0, static_cast<long long>(hosts) - 1) + " for " +
                    std::to_string(hosts) + (ps ? " --ps-hosts" : " --worker-hosts"));
    check_distinct_hosts(named_hosts(o, raw));
  }
  const std::size_t ps = o.ps_hosts.size();
  if (o.ps_replicas > ps)
    bad_value(value_of("ps-replicas", o.ps_replicas), "ps-replicas", "is out of range",
              integer_expectation(1, static_cast<long long>(ps)) + " for " + std::to_string(ps) +
                  " --ps-hosts");
  // A ps process keeps one backup (its neighbour's shard); a local cluster
  // over tcp runs its shards in one process, where nothing fails alone.
  if (o.ps_replicas > 2 && o.role != role_kind::local)
    bad_value(value_of("ps-replicas", o.ps_replicas), "ps-replicas", "is not served here",
              "1 or 2 for ps and worker processes (a ps keeps one backup)");
  if (o.ps_replicas > 1 && o.role == role_kind::local && o.transport != transport_kind::inproc)
    bad_value(value_of("ps-replicas", o.ps_replicas), "ps-replicas", "is not served here",
              "1 with --transport=tcp (--role=local keeps its backups in process)");
}

// Every value is held, copied and quoted in messages: none may be longer
// than max_option_value_bytes (a long host list is a few KiB). The message
// names the option and the limit, not the value.
void check_value_lengths(const raw_values& raw) {
  for (const auto& [name, v] : raw)
    if (v.text.size() > max_option_value_bytes)
      throw config_error("config: " + label(v, name) + " is " + std::to_string(v.text.size()) +
                         " bytes long, more than the limit of " +
                         std::to_string(max_option_value_bytes) + " bytes for a value");
}

}  // namespace

options build_options(const raw_values& raw, command_kind command, const known_formats& formats) {
  check_value_lengths(raw);
  options start;
  start.command = command;
  options o = read_operations(read_cluster(read_files_and_model(start, raw, formats), raw), raw);
  check_data_and_model(o, raw);
  check_cluster(o, raw);
  for (const auto& [name, v] : raw) o.sources[name] = label(v, name);
  return o;
}

}  // namespace config_detail

std::string to_string(role_kind r) {
  switch (r) {
    case role_kind::local:
      return "local";
    case role_kind::ps:
      return "ps";
    case role_kind::worker:
      return "worker";
    case role_kind::reference:
      return "reference";
  }
  return "unknown";
}

std::string to_string(train_mode m) {
  switch (m) {
    case train_mode::sync:
      return "sync";
    case train_mode::ssp:
      return "ssp";
    default:
      return "async";
  }
}

std::string to_string(command_kind c) {
  switch (c) {
    case command_kind::eval:
      return "eval";
    case command_kind::inspect:
      return "inspect";
    case command_kind::export_npz:
      return "export";
    case command_kind::status:
      return "status";
    case command_kind::plot:
      return "plot";
    default:
      return "train";
  }
}

std::string to_string(data_format_kind f) {
  switch (f) {
    case data_format_kind::csv:
      return "csv";
    case data_format_kind::libsvm:
      return "libsvm";
    case data_format_kind::criteo:
      return "criteo";
    case data_format_kind::registered:
      return "registered";
    default:
      return "idx";
  }
}

std::string to_string(sparse_optimizer_kind k) {
  return k == sparse_optimizer_kind::adagrad ? "adagrad" : "sgd";
}

std::string to_string(csv_label_kind c) { return c == csv_label_kind::last ? "last" : "first"; }

std::string to_string(const std::vector<std::size_t>& sizes) {
  std::string text;
  for (std::size_t n : sizes) text += (text.empty() ? "" : ",") + std::to_string(n);
  return text;
}

std::string to_string(placement_kind p) {
  return p == placement_kind::round_robin ? "round-robin" : "balanced";
}

std::string to_string(wire_dtype d) { return d == wire_dtype::bf16 ? "bf16" : "fp32"; }

std::string to_string(log_level l) {
  switch (l) {
    case log_level::error:
      return "error";
    case log_level::warn:
      return "warn";
    case log_level::debug:
      return "debug";
    default:
      return "info";
  }
}

std::string to_string(log_format_kind f) { return f == log_format_kind::json ? "json" : "text"; }

std::string to_string(transport_kind t) {
  return t == transport_kind::tcp ? "tcp" : "inproc";
}

}  // namespace downpour
