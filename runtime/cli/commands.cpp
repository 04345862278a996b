#include "runtime/cli/commands.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <ostream>
#include <sstream>

#include "reporting/log.hpp"
#include "protocol/model_snapshot.hpp"
#include "protocol/placement.hpp"
#include "runtime/cli/model_build.hpp"
#include "runtime/cli/row_arrays.hpp"
#include "runtime/files/checkpoint.hpp"
#include "runtime/files/npz.hpp"
#include "runtime/files/plot.hpp"
#include "runtime/node/job.hpp"

namespace downpour {
namespace {

std::string utc_text(double unix_seconds) {
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  char buf[32] = "?";
  if (gmtime_r(&t, &tm)) std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string shape_text(const std::vector<std::size_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

found_checkpoint locate(const options& opts, std::ostream& warnings) {
  if (!opts.checkpoint_file.empty())
    return {opts.checkpoint_file, read_checkpoint(opts.checkpoint_file)};
  auto found = find_newest_checkpoint(opts.checkpoint_dir, warnings);
  if (!found) throw checkpoint_error("checkpoint: no valid checkpoint in " + opts.checkpoint_dir);
  return std::move(*found);
}

int run_eval(const options& opts, const application& app, std::ostream& out,
             std::ostream& err) {
  const found_checkpoint found = locate(opts, err);
  const checkpoint& c = found.data;
  const job_model job = build_job_model(opts, load_data_splits(opts, app.readers), app.make_model);
  check_layout(c, job.layout, found.path);
  const auto rows = row_tables_for(opts, job.layout);
  const auto both = evaluate_test(*job.net, c.params.data(), c.ema.data(), c.rows, rows, job.data);
  const accuracy_report& raw = both.raw;
  const accuracy_report& ema = both.ema;
  out << "eval: checkpoint=" << found.path << " mode=" << c.mode << " model=" << c.layout.kind()
      << " spec=" << c.layout.spec() << " test_examples=" << raw.examples << "\n";
  for (std::size_t k = 0; k < raw.per_class.size(); ++k)
    out << "eval: class=" << k << " test_accuracy=" << fixed_text(raw.per_class[k], 4)
        << " ema_test_accuracy=" << fixed_text(ema.per_class[k], 4) << "\n";
  out << "eval: global_step=" << c.global_step << " test_accuracy=" << fixed_text(raw.overall, 4)
      << " ema_test_accuracy=" << fixed_text(ema.overall, 4);
  if (raw.kind == prediction::probability)
    out << " test_log_loss=" << fixed_text(raw.log_loss, 5)
        << " test_auc=" << fixed_text(raw.auc, 4);
  if (raw.kind == prediction::value) out << " test_rmse=" << fixed_text(raw.rmse, 5);
  out << std::endl;
  return 0;
}

// As stored: inspect reads what it can of a damaged file.
std::size_t parameters(const checkpoint_info& info) {
  std::size_t n = 0;
  for (const auto& v : info.variables) n += v.size();
  return n;
}

// A dense variable's slots as TensorFlow names them (VAR/Adagrad, VAR/Adam_1, ...).
std::vector<std::string> dense_slot_names(const variable_info& v) {
  static const char* const base[] = {"", "Momentum", "Adagrad", "Adam", "Ftrl"};
  std::vector<std::string> out;
  for (std::size_t k = 0; k < slots_of(v.update.rule); ++k)
    out.push_back(v.name + "/" + base[static_cast<int>(v.update.rule)] +
                  (k == 0 ? "" : "_" + std::to_string(k)));
  return out;
}

// The dense slots a checkpoint holds (format 6), as arrays of their variables' shapes.
std::vector<npy_array> dense_slot_arrays(const checkpoint& c) {
  std::vector<npy_array> out;
  if (c.slots.empty()) return out;
  std::size_t at = 0;
  for (const auto& v : c.layout.variables())
    for (const auto& name : dense_slot_names(v)) {
      out.push_back({name, tf_shape(v), c.slots.data() + at});
      at += v.size();
    }
  return out;
}

std::string inspect_path(const options& opts, std::ostream& err) {
  return opts.checkpoint_file.empty() ? locate(opts, err).path : opts.checkpoint_file;
}

int run_inspect(const options& opts, std::ostream& out, std::ostream& err) {
  const checkpoint_info info = inspect_checkpoint(inspect_path(opts, err));
  char wall[64];
  std::snprintf(wall, sizeof wall, "%.3f", info.wall_time);
  out << "checkpoint: " << info.path << "\n"
      << "format_version: " << info.format_version << "\n"
      << "global_step: " << info.global_step << "\n"
      << "mode: " << info.mode << "\n"
      << "wall_time: " << wall << " (" << utc_text(info.wall_time) << ")\n"
      << "model: " << info.kind << " " << info.spec << " (" << parameters(info)
      << " parameters)\n";
  for (const auto& v : info.variables)
    out << "variable: " << v.name << " offset=" << v.offset << " shape=" << shape_text(tf_shape(v))
        << "\n";
  for (const auto& v : info.variables)
    for (const auto& name : info.dense_slots > 0 ? dense_slot_names(v) : std::vector<std::string>{})
      out << "slot: " << name << " shape=" << shape_text(tf_shape(v)) << "\n";
  if (!info.row_variables.empty()) inspect_row_variables(info, opts.ps_hosts.size(), out);
  if (info.positions > 0 && info.checksum_ok())
    for (const auto& p : read_checkpoint(info.path).positions)
      out << "position: worker " << p.worker << " pass=" << p.at.pass + 1
          << " examples=" << p.at.examples << " batches=" << p.at.batches << "\n";
  char crc[64];
  std::snprintf(crc, sizeof crc, "0x%08x", static_cast<unsigned>(info.stored_checksum));
  out << "payload_bytes: " << info.payload_bytes << " (file " << info.file_bytes << " bytes)\n"
      << "crc32: " << crc << (info.checksum_ok() ? " checksum ok" : " CHECKSUM MISMATCH") << "\n";
  out.flush();
  if (info.checksum_ok()) return 0;
  std::snprintf(crc, sizeof crc, "0x%08x", static_cast<unsigned>(info.computed_checksum));
  err << "downpour: checkpoint: " << info.path << ": checksum mismatch (computed " << crc << ")"
      << std::endl;
  return 1;
}

int run_export(const options& opts, std::ostream& out, std::ostream& err) {
  if (opts.out_file.empty()) throw config_error("export: --out FILE is required");
  const found_checkpoint found = locate(opts, err);
  const checkpoint& c = found.data;
  const std::vector<float>& values = opts.export_ema ? c.ema : c.params;
  std::vector<npy_array> arrays;
  for (const auto& v : c.layout.variables())
    arrays.push_back({v.name, tf_shape(v), values.data() + v.offset});
  row_arrays rows = row_arrays_of(c);
  arrays.insert(arrays.end(), rows.arrays.begin(), rows.arrays.end());
  const auto slots = dense_slot_arrays(c);
  arrays.insert(arrays.end(), slots.begin(), slots.end());
  write_npz(opts.out_file, arrays);
  out << "export: wrote " << opts.out_file << " (" << arrays.size() << " arrays, "
      << (opts.export_ema ? "moving averages" : "parameters") << " of " << found.path
      << " at global_step=" << c.global_step << ")" << std::endl;
  return 0;
}

}  // namespace

int run_command(const options& opts, const application& app, std::ostream& out,
                std::ostream& err) {
  try {
    switch (opts.command) {
      case command_kind::eval:
        return run_eval(opts, app, out, err);
      case command_kind::inspect:
        return run_inspect(opts, out, err);
      case command_kind::export_npz:
        return run_export(opts, out, err);
      case command_kind::plot:
        return run_plot(opts, out, err);
      case command_kind::train:
      case command_kind::status:  // asks a live chief: runtime/cli/status_client.cpp
        break;
    }
    throw config_error("run_command: '" + to_string(opts.command) +
                       "' is not a checkpoint command");
  } catch (const config_error& e) {
    err << "downpour: " << e.what() << std::endl;
    return 2;
  } catch (const std::exception& e) {
    err << "downpour: " << e.what() << std::endl;
    return 1;
  }
}

}  // namespace downpour
