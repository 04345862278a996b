// The one options struct of Downpour, filled in one place (parse_options) from
// the command line, the environment (DOWNPOUR_<OPTION>, TF_CONFIG) and an INI
// file, in that order of precedence.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "config/placement_kind.hpp"
#include "config/wire_dtype.hpp"

namespace downpour {

// Thrown for a bad option, value or config file; what() is one line naming the
// bad value and what was expected.
struct config_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class role_kind { local, ps, worker, reference };
enum class train_mode { async, sync, ssp };
enum class transport_kind { inproc, tcp };
// Log thresholds, most severe first: a line is printed when its level <= --log-level.
enum class log_level { error, warn, info, debug };
// Log lines as text (time node LEVEL message) or one JSON object per line.
enum class log_format_kind { text, json };
// What the binary does: train (the default) or work with a saved checkpoint.
enum class command_kind { train, eval, inspect, export_npz, status, plot };
// The data files: MNIST's IDX files in --data-dir, or CSV, libsvm or
// Criteo TSV --train-file and --test-file, or --train-file and --test-file
// in a format whose reader the program registered (data/data_reader.hpp).
enum class data_format_kind { idx, csv, libsvm, criteo, registered };
// How the training files are read (docs/input.md): whole into memory
// (TensorFlow's next_batch over the set; IDX always), or streamed in blocks
// with each worker its share; automatic: streamed for libsvm and criteo.
enum class input_kind { automatic, memory, stream };
// The column of a CSV file that holds the label.
enum class csv_label_kind { first, last };
// How a shard updates the rows of a sparse variable (model/sparse_table.hpp):
// plain SGD, or TF's AdagradOptimizer (accumulators start at 0.1).
enum class sparse_optimizer_kind { sgd, adagrad };

// Bounds on what the options are read from (docs/options.md): a config file
// is read whole, so its size is bounded; no value of any source needs more
// than a long host list; durations become CAF's 64-bit nanosecond timespans,
// which overflow near 292 years, so they are bounded well below that.
inline constexpr std::size_t max_config_file_bytes = std::size_t{1} << 20;    // 1 MiB
inline constexpr std::size_t max_option_value_bytes = std::size_t{64} << 10;  // 64 KiB
inline constexpr double max_duration_s = 1e6;                                 // about 11.6 days

struct host_port {
  std::string host;
  std::uint16_t port = 0;  // 0: ephemeral (tests)
};

// The sizes a --cluster-secret-file may have (after one trailing newline).
inline constexpr std::size_t min_cluster_secret_bytes = 16;
inline constexpr std::size_t max_cluster_secret_bytes = 4096;

struct options {
  command_kind command = command_kind::train;
  // Files and data.
  std::string config_file;
  std::string data_dir = DOWNPOUR_DEFAULT_DATA_DIR;
  data_format_kind data_format = data_format_kind::idx;
  std::string registered_format;  // registered: the --data-format name
  std::string train_file;  // csv, libsvm, criteo: paths and globs, comma-separated
  std::string test_file;   // csv, libsvm, criteo
  csv_label_kind csv_label = csv_label_kind::first;
  input_kind input = input_kind::automatic;
  std::size_t shuffle_buffer = 65536;  // streamed: examples shuffled at once
  std::uint64_t passes = 0;            // streamed: passes over the training files; 0: no end
  std::size_t max_line_bytes = std::size_t{1} << 20;  // the longest line read
  std::string checkpoint_dir = "logs/log_async";
  std::size_t validation_size = 5000;
  // Model and training.
  std::string model = "mlp";                     // a built-in model's name (--model)
  std::vector<std::size_t> hidden_units{500};    // mlp: units per hidden layer
  std::uint64_t sparse_rows = std::uint64_t{1} << 20;  // logreg, fm: rows features hash into
  std::size_t fm_factors = 8;                          // fm: factors per feature row
  std::size_t embedding_dim = 16;                      // dlrm, wide_deep: embedding width
  std::vector<std::size_t> bottom_units{512, 256, 64};  // dlrm: bottom MLP's hidden layers
  std::vector<std::size_t> top_units{512, 256};         // dlrm: top MLP's hidden layers
  sparse_optimizer_kind sparse_optimizer = sparse_optimizer_kind::sgd;  // of a rows variable
  std::size_t batch_size = 100;
  float learning_rate = 0.01f;
  float lr_decay_rate = 0.99f;
  std::int64_t lr_decay_steps = 600;
  bool lr_staircase = false;
  float l2 = 1e-4f;
  float ema_decay = 0.99f;
  std::int64_t last_step = 20000;
  std::uint64_t seed = 1;
  std::int64_t log_every = 10;
  bool quiet = false;  // no periodic status lines (tests, scripts)
  // Checkpoints.
  double save_checkpoint_secs = 60.0;  // 0: no timed checkpoints
  std::int64_t save_checkpoint_steps = 0;  // 0: no step-count checkpoints
  std::size_t keep_checkpoints = 5;
  bool fresh = false;           // start from step 0; an earlier run's files are moved aside
  std::int64_t max_bad_batches = 0;  // non-finite batches skipped before the job diverges
  std::string checkpoint_file;  // eval/inspect/export: one checkpoint file
  std::string out_file;         // export: the .npz to write
  bool export_ema = false;      // export: the moving averages instead of the raw weights
  // Cluster.
  role_kind role = role_kind::local;
  std::size_t task = 0;
  // --join: a worker not in --worker-hosts joins the running job of this
  // chief, which assigns its task index (docs/operations.md).
  std::optional<host_port> join;
  std::vector<host_port> ps_hosts = {{"localhost", 1111}, {"localhost", 1112}};
  std::vector<host_port> worker_hosts = {{"localhost", 2222}, {"localhost", 2223}};
  train_mode mode = train_mode::async;
  std::size_t replicas_to_aggregate = 0;  // 0: the number of workers
  std::int64_t staleness = 3;             // ssp: steps a worker may run ahead
  // Trainer actors per worker process, each with its own batches and worker
  // index (task * trainers + t), sharing one exchange per shard.
  std::size_t trainers = 1;
  // Copies of each shard on distinct ps tasks (1: none beyond the primary;
  // docs/failure-model.md), at most the number of --ps-hosts.
  std::size_t ps_replicas = 1;
  placement_kind placement = placement_kind::balanced;
  transport_kind transport = transport_kind::inproc;
  bool pipeline = true;  // async: the next pull overlaps this step's compute
  // async, ssp: step tickets a worker takes from the chief at a time (1: one
  // request per step); its own, need not match across nodes.
  std::int64_t ticket_lease = 1;
  wire_dtype wire = wire_dtype::fp32;  // pushes and pulls between nodes
  double connect_timeout_s = 30.0;  // tf_config_connect_timeout_s under TF_CONFIG
  double stop_grace_s = 20.0;  // a stop (SIGTERM) ends the node within this, whatever it waits for
  // CAF scheduler tuning (measured faster on small machines; see docs/performance.md).
  std::string scheduler_policy = "sharing";
  std::size_t scheduler_threads = 0;  // 0: min(hardware threads, 4), at least 2
  // Failure detection and security.
  double heartbeat_interval_s = 0.5;  // CAF middleman heartbeats between nodes
  double node_timeout_s = 5.0;        // a silent peer is treated as dead after this
  std::string tls_ca;                 // all three set: mutual TLS; none: plain TCP
  std::string tls_cert;
  std::string tls_key;
  std::string tls_passphrase;
  std::string cluster_name = "downpour";  // nodes of other clusters are refused
  std::string cluster_secret_file;        // a shared secret: hellos prove they hold it
  std::string cluster_secret;             // its contents, read at start; empty: none
  std::string bind_address;               // empty: the host of this node's own entry
  // Watching a job.
  std::int64_t eval_every = 0;  // global steps between validation evaluations; 0: never
  std::string metrics_file;   // plot: the metrics.csv to draw
  std::string chief_address;  // status: host:port of the chief; empty: worker-hosts[0]
  bool status_json = false;   // status: one JSON object instead of text
  std::uint16_t metrics_port = 0;           // chief and ps: /metrics over HTTP; 0: off
  std::string metrics_bind = "127.0.0.1";   // plain HTTP: loopback unless asked
  log_level log_threshold = log_level::info;  // --log-level
  log_format_kind log_format = log_format_kind::text;  // --log-format
  // Where each option given was set: "--batch-size", "DOWNPOUR_BATCH_SIZE",
  // "TF_CONFIG task.index" or "FILE: batch-size" (status shows it).
  std::map<std::string, std::string> sources;
  bool tls() const { return !tls_ca.empty(); }
};

// --connect-timeout's default when TF_CONFIG gives the cluster: Kubernetes
// starts the pods of a job minutes apart.
inline constexpr double tf_config_connect_timeout_s = 300.0;

// Parses argv (and the INI file named by --config). Returns nullopt when
// --help or --version was printed to out. Throws config_error on bad input.
std::optional<options> parse_options(int argc, const char* const* argv, std::ostream& out);

// The same for a program that registered readers of its own formats:
// --data-format takes their names besides the built-in ones.
struct known_formats {
  std::vector<std::string> registered;
};
std::optional<options> parse_options(int argc, const char* const* argv, std::ostream& out,
                                     const known_formats& formats);

// The --help text: every option with its default.
std::string help_text();

// Names used in messages and logs.
std::string to_string(role_kind r);
std::string to_string(train_mode m);
std::string to_string(placement_kind p);
std::string to_string(transport_kind t);
std::string to_string(wire_dtype d);
std::string to_string(log_level l);
std::string to_string(log_format_kind f);
std::string to_string(command_kind c);
std::string to_string(data_format_kind f);
// --data-format's value: the built-in format's name or the registered one.
std::string data_format_name(const options& o);
std::string to_string(csv_label_kind c);
std::string to_string(input_kind k);

// Whether the job's training files are streamed (input, resolved by the
// data format).
bool streams_input(const options& o);
std::string to_string(sparse_optimizer_kind k);
std::string to_string(const std::vector<std::size_t>& sizes);  // "500,300"
std::string to_string(const host_port& h);
std::string to_string(const std::vector<host_port>& hosts);

// "host:port,[ipv6]:port" -> list (IPv6 hosts without brackets); throws config_error naming the bad entry.
// option_name is quoted as given in the message, e.g. "--ps-hosts".
std::vector<host_port> parse_host_list(const std::string& text, const std::string& option_name);

// One entry of the host lists, as messages name it.
struct named_host {
  host_port where;
  std::string option;  // "--ps-hosts", or "FILE: ps-hosts" for a config file
  std::string node;    // "ps 1", "worker 0"
};

// Two nodes on one host:port (after resolving names, so localhost:P and
// 127.0.0.1:P clash) cannot both listen: throws config_error naming both.
void check_distinct_hosts(const std::vector<named_host>& nodes);

// An address to listen on without a port: "0.0.0.0", "::1" or "[::1]" (brackets
// dropped); throws config_error naming option_name for anything else.
std::string parse_address(const std::string& text, const std::string& option_name);

}  // namespace downpour
