// What every way of running the job shares: the model and its data, the
// schedule from the options, per-worker seeds, the log line and the final
// summary.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/options.hpp"
#include "data/data_reader.hpp"
#include "data/dataset.hpp"
#include "model/model.hpp"
#include "model/schedule.hpp"
#include "model/row_tables.hpp"

namespace downpour {

// The job's data: --data-dir (IDX) or --train-file and --test-file (CSV,
// libsvm, Criteo, or a format of readers: --data-format=NAME) with
// --validation-size held out. Throws data_error.
data_splits load_data_splits(const options& opts, const data_readers& readers = {});

// The same for a training node, whose training split must fill a
// --batch-size batch. Checked before any actor starts, so that a size no
// worker could train on is one data error line, not an exception in every
// worker. Throws data_error.
data_splits load_job_data(const options& opts, const data_readers& readers = {});

// The shape and classes of the job's data without the examples where the
// format allows (IDX: headers and labels; a registered format is read
// whole): what a ps builds the model for. Throws data_error.
data_summary summarize_job_data(const options& opts, const data_readers& readers = {});

// What the model factory is asked for: the data's shape and classes, --l2,
// --model and --hidden-units.
model_request request_for(const options& opts, const data_summary& data);

// The model a node trains, as the program's factory built it.
struct job_model {
  std::shared_ptr<const model> net;  // null on a ps: it needs the layout only
  model_layout layout;
  data_splits data;  // empty on a ps
};

// The settings every node of the job must share (config/cluster_fingerprint)
// and the model: its kind, spec and variables.
std::string job_fingerprint(const options& opts, const model_layout& layout);

lr_schedule schedule_for(const options& opts);

// The workers of the job: every worker node's --trainers.
std::size_t trainer_count(const options& opts);

// replicas_to_aggregate with 0 resolved to the number of workers (trainers).
std::size_t replicas_for(const options& opts);

// Worker k's shuffle seed; worker 0's equals the reference trainer's so that a
// one-worker cluster sees the reference's batches.
std::uint64_t worker_batch_seed(std::uint64_t seed, std::size_t worker);

// How a job ended (summary.json's "status"; exit codes in runtime/node/signals.hpp).
enum class job_status { completed, stopped, diverged, failed };
std::string to_string(job_status s);

struct run_summary {
  job_status status = job_status::completed;
  std::int64_t global_step = 0;
  std::optional<float> loss;  // none when nothing was trained (the job was at its last step)
  double test_accuracy = 0.0;
  double ema_test_accuracy = 0.0;
  // A model predicting a probability: the test set's log loss and AUC; a
  // value: its RMSE (the final line and summary.json name them only then).
  std::optional<double> test_log_loss;
  std::optional<double> test_auc;
  std::optional<double> test_rmse;
  double wall_s = 0.0;
  double steps_per_s = 0.0;
  // Updates applied from step 0 (the lost ones included), lost to restores
  // after a lost ps (at the end applied - lost == global_step), and seconds
  // training paused while recovering (actors/update_tally.hpp).
  std::int64_t updates_applied = 0;
  std::int64_t updates_lost = 0;
  double failover_pause_s = 0.0;
  std::string checkpoint;  // stopped: the checkpoint written at global_step
  std::string error;       // diverged, failed: why
};

// What the chief knows at the end of a job.
struct job_result {
  run_summary summary;
  std::vector<float> params;
  std::vector<float> ema;
  row_dump rows;              // the sparse variable's rows held, if the model has one
  std::int64_t dropped = 0;   // sync: stale gradients dropped, summed over shards
  std::int64_t replayed = 0;  // pulls answered without parameters (replay_offer)
  // A job restarted after it completed: summary is the one written then,
  // reported again and kept as it is (runtime/node/finished.hpp).
  bool reported_before = false;
};

// The summary's figures of the test set's report: the accuracies, and those
// of what the model predicts (accuracy_report).
void add_test_figures(run_summary& s, const accuracy_report& raw, const accuracy_report& ema);

// The table of the job's sparse variable (--seed, --sparse-optimizer), or
// none for a dense model.
row_tables_spec row_tables_for(const options& opts, const model_layout& layout);

// "final: global_step=N loss=L test_accuracy=A ema_test_accuracy=E wall_s=S steps_per_s=R",
// with test_log_loss=X test_auc=Y after the accuracies for a model predicting a
// probability, test_rmse=X for a value
std::string final_line(const run_summary& s);
// {"status": ..., "global_step": ...}: the accuracies when completed, the
// checkpoint when stopped, the error when diverged or failed.
std::string summary_json(const run_summary& s);
// The summary of summary_json's text; none if it is not one (a damaged or
// foreign file is no finished job).
std::optional<run_summary> parse_summary_json(const std::string& text);

}  // namespace downpour
