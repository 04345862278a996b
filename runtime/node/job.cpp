#include "runtime/node/job.hpp"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "actors/parameter_shard.hpp"
#include "config/cluster_fingerprint.hpp"
#include "data/csv.hpp"
#include "data/idx.hpp"
#include "data/libsvm.hpp"
#include "data/streamed_input.hpp"

namespace downpour {

namespace {

data_splits load_csv_splits(const options& opts) {
  const auto label = opts.csv_label == csv_label_kind::last ? csv_label_column::last
                                                            : csv_label_column::first;
  auto train = load_csv(opts.train_file, label, opts.max_line_bytes);
  auto test = load_csv(opts.test_file, label, opts.max_line_bytes);
  return split_data({opts.train_file, train}, {opts.test_file, test},
                    data_shape{{train->features()}}, opts.validation_size);
}

text_spec text_spec_of(const options& opts) {
  text_spec t;
  t.format = opts.data_format == data_format_kind::csv      ? text_format::csv
             : opts.data_format == data_format_kind::criteo ? text_format::criteo
                                                            : text_format::libsvm;
  t.label = opts.csv_label == csv_label_kind::last ? csv_label_column::last
                                                   : csv_label_column::first;
  t.max_line_bytes = opts.max_line_bytes;
  return t;
}

// libsvm and criteo files read whole: every file of the list, in order.
sparse_examples load_sparse_files(const options& opts, const std::string& files) {
  streamed_input in = open_input(input_request{text_spec_of(opts), "", files});
  sparse_examples all;
  auto batches = in_order_batches(in, 65536, "the reader of " + files);
  while (const batch* b = batches->next()) {
    for (std::size_t r = 0; r < b->size; ++r) {
      all.keys.insert(all.keys.end(), b->keys.begin() + b->offsets[r], b->keys.begin() + b->offsets[r + 1]);
      all.values.insert(all.values.end(), b->values.begin() + b->offsets[r], b->values.begin() + b->offsets[r + 1]);
      all.close_example(static_cast<std::uint8_t>(b->y[r]));
    }
  }
  return all;
}

data_splits load_sparse_splits(const options& opts) {
  auto train = std::make_shared<libsvm_set>(load_sparse_files(opts, opts.train_file));
  auto test = std::make_shared<libsvm_set>(load_sparse_files(opts, opts.test_file));
  return split_data({opts.train_file, train}, {opts.test_file, test}, data_shape{{0}},
                    opts.validation_size);
}

// The files listed and each worker's share planned; nothing read whole.
// eval reads the test files only.
data_splits open_streamed(const options& opts, const std::string& train_files) {
  input_request r;
  r.text = text_spec_of(opts);
  r.train_files = train_files;
  r.test_files = opts.test_file;
  r.workers = trainer_count(opts);
  r.validation_size = train_files.empty() ? 0 : opts.validation_size;
  r.shuffle_buffer = opts.shuffle_buffer;
  r.passes = opts.passes;
  auto in = std::make_shared<streamed_input>(open_input(r));
  data_splits s;
  s.validation = batch_dataset(std::exchange(in->validation, batch{}));
  const bool sparse = is_sparse(in->text.format);
  s.shape = data_shape{{sparse ? 0 : in->csv_fields - 1}};
  s.classes = sparse ? 2 : in->classes;
  s.stream = std::move(in);
  return s;
}

// The program's reader of --data-format=NAME; eval reads the test files alone.
data_splits read_registered(const options& opts, const data_readers& readers) {
  const auto reader = readers.find(opts.registered_format);
  if (reader == readers.end())
    throw config_error("config: --data-format=" + opts.registered_format +
                       " has no reader in this program");
  data_request r;
  r.format = opts.registered_format;
  r.train_file = opts.command == command_kind::eval ? "" : opts.train_file;
  r.test_file = opts.test_file;
  r.validation_size = opts.validation_size;
  r.max_line_bytes = opts.max_line_bytes;
  return read_data(reader->second, r);
}

std::string data_source(const options& opts) {
  return opts.data_format == data_format_kind::idx ? opts.data_dir : opts.train_file;
}

}  // namespace

data_splits load_data_splits(const options& opts, const data_readers& readers) {
  if (opts.data_format == data_format_kind::registered) return read_registered(opts, readers);
  if (streams_input(opts))
    return open_streamed(opts, opts.command == command_kind::eval ? "" : opts.train_file);
  if (opts.data_format == data_format_kind::csv) return load_csv_splits(opts);
  if (opts.data_format != data_format_kind::idx) return load_sparse_splits(opts);
  return load_mnist(opts.data_dir, opts.validation_size);
}

data_splits load_job_data(const options& opts, const data_readers& readers) {
  auto data = load_data_splits(opts, readers);
  // A stream ends each pass with what is left: any batch size trains.
  if (data.stream) return data;
  if (opts.batch_size > data.train->size())
    throw data_error("data: --batch-size=" + std::to_string(opts.batch_size) + " exceeds the " +
                     std::to_string(data.train->size()) + " training examples of " +
                     data_source(opts) + " (--validation-size=" +
                     std::to_string(opts.validation_size) + " are held out)");
  return data;
}

data_summary summarize_job_data(const options& opts, const data_readers& readers) {
  if (opts.data_format == data_format_kind::registered)
    return read_registered(opts, readers).summary();
  // Sparse examples have no fixed features and two classes by the format:
  // a ps (millions of examples, none of which it trains on) reads nothing.
  if (opts.data_format == data_format_kind::libsvm || opts.data_format == data_format_kind::criteo)
    return data_summary{data_shape{{0}}, 2};
  // Streamed CSV: the first training line's fields and the test files' labels.
  if (opts.data_format == data_format_kind::csv && streams_input(opts)) {
    streamed_input in = open_input(input_request{text_spec_of(opts), "", opts.test_file});
    const std::size_t fields = csv_fields_of(list_data_files(opts.train_file)[0].path, in.text);
    return data_summary{data_shape{{fields - 1}}, in.classes};
  }
  if (opts.data_format == data_format_kind::csv) return load_csv_splits(opts).summary();
  return summarize_mnist(opts.data_dir);
}

model_request request_for(const options& opts, const data_summary& data) {
  return model_request{
      data.shape, data.classes, opts.l2,
      model_choice{opts.model, opts.hidden_units, opts.sparse_rows, opts.fm_factors,
                   opts.sparse_optimizer == sparse_optimizer_kind::adagrad ? update_rule::adagrad
                                                                           : update_rule::sgd,
                   opts.embedding_dim, opts.bottom_units, opts.top_units}};
}

std::string job_fingerprint(const options& opts, const model_layout& layout) {
  return cluster_fingerprint(opts) + ";model=" + layout.to_string() +
         ";variables=" + layout.variables_text();
}

lr_schedule schedule_for(const options& opts) {
  return lr_schedule{opts.learning_rate, opts.lr_decay_rate, opts.lr_decay_steps,
                     opts.lr_staircase};
}

std::size_t trainer_count(const options& opts) {
  return opts.worker_hosts.size() * opts.trainers;
}

std::size_t replicas_for(const options& opts) {
  return opts.replicas_to_aggregate == 0 ? trainer_count(opts) : opts.replicas_to_aggregate;
}

std::uint64_t worker_batch_seed(std::uint64_t seed, std::size_t worker) {
  // splitmix64 step: distinct, well-mixed streams per worker.
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (worker + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

namespace {

// The loss with the given precision, or `none` (nothing trained, so no loss).
std::string loss_text(const run_summary& s, const char* none, int digits) {
  if (!s.loss) return none;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*g", digits, static_cast<double>(*s.loss));
  return buf;
}

}  // namespace

row_tables_spec row_tables_for(const options& opts, const model_layout& layout) {
  return row_tables_of(layout, opts.seed);
}

void add_test_figures(run_summary& s, const accuracy_report& raw, const accuracy_report& ema) {
  s.test_accuracy = raw.overall;
  s.ema_test_accuracy = ema.overall;
  if (raw.kind == prediction::probability) {
    s.test_log_loss = raw.log_loss;
    s.test_auc = raw.auc;
  }
  if (raw.kind == prediction::value) s.test_rmse = raw.rmse;
}

std::string final_line(const run_summary& s) {
  char sparse[96] = "";
  if (s.test_log_loss && s.test_auc)
    std::snprintf(sparse, sizeof sparse, " test_log_loss=%.5f test_auc=%.4f", *s.test_log_loss,
                  *s.test_auc);
  if (s.test_rmse) std::snprintf(sparse, sizeof sparse, " test_rmse=%.5f", *s.test_rmse);
  char buf[448];
  std::snprintf(buf, sizeof buf,
                "final: global_step=%lld loss=%s test_accuracy=%.4f ema_test_accuracy=%.4f%s "
                "wall_s=%.3f steps_per_s=%.2f updates_applied=%lld updates_lost=%lld "
                "failover_pause_s=%.3f",
                static_cast<long long>(s.global_step), loss_text(s, "none", 6).c_str(),
                s.test_accuracy, s.ema_test_accuracy, sparse, s.wall_s, s.steps_per_s,
                static_cast<long long>(s.updates_applied), static_cast<long long>(s.updates_lost),
                s.failover_pause_s);
  return buf;
}

std::string to_string(job_status s) {
  switch (s) {
    case job_status::completed:
      return "completed";
    case job_status::stopped:
      return "stopped";
    case job_status::diverged:
      return "diverged";
    case job_status::failed:
      return "failed";
  }
  return "failed";
}

std::string summary_json(const run_summary& s) {
  // JSON has no nan or inf: a diverged loss is written as null.
  auto number = [](double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(); };
  nlohmann::ordered_json j;
  j["status"] = to_string(s.status);
  if (s.status == job_status::diverged || s.status == job_status::failed) {
    j["error"] = s.error;
    return j.dump(2) + "\n";
  }
  j["global_step"] = s.global_step;
  j["loss"] = s.loss ? number(*s.loss) : nlohmann::json();  // none: nothing trained
  if (s.status == job_status::completed) {
    j["test_accuracy"] = number(s.test_accuracy);
    j["ema_test_accuracy"] = number(s.ema_test_accuracy);
    if (s.test_log_loss) j["test_log_loss"] = number(*s.test_log_loss);
    if (s.test_auc) j["test_auc"] = number(*s.test_auc);
    if (s.test_rmse) j["test_rmse"] = number(*s.test_rmse);
  } else {
    j["checkpoint"] = s.checkpoint;
  }
  j["wall_s"] = number(s.wall_s);
  j["steps_per_s"] = number(s.steps_per_s);
  j["updates_applied"] = s.updates_applied;
  j["updates_lost"] = s.updates_lost;
  j["failover_pause_s"] = number(s.failover_pause_s);
  return j.dump(2) + "\n";
}

namespace {

std::optional<double> number_at(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

}  // namespace

std::optional<run_summary> parse_summary_json(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("status") || !j["status"].is_string()) return std::nullopt;
  run_summary s;
  const auto status = j["status"].get<std::string>();
  for (auto k : {job_status::completed, job_status::stopped, job_status::diverged})
    if (status == to_string(k)) s.status = k;
  if (to_string(s.status) != status) s.status = job_status::failed;
  auto step = number_at(j, "global_step");
  if (!step) return std::nullopt;
  s.global_step = static_cast<std::int64_t>(*step);
  if (auto loss = number_at(j, "loss")) s.loss = static_cast<float>(*loss);
  s.test_accuracy = number_at(j, "test_accuracy").value_or(0.0);
  s.ema_test_accuracy = number_at(j, "ema_test_accuracy").value_or(0.0);
  s.test_log_loss = number_at(j, "test_log_loss");
  s.test_auc = number_at(j, "test_auc");
  s.test_rmse = number_at(j, "test_rmse");
  s.wall_s = number_at(j, "wall_s").value_or(0.0);
  s.steps_per_s = number_at(j, "steps_per_s").value_or(0.0);
  s.updates_applied = static_cast<std::int64_t>(number_at(j, "updates_applied").value_or(0.0));
  s.updates_lost = static_cast<std::int64_t>(number_at(j, "updates_lost").value_or(0.0));
  s.failover_pause_s = number_at(j, "failover_pause_s").value_or(0.0);
  return s;
}

}  // namespace downpour
