// One program for every role and command, with the model the caller's
// factory builds for the job's data.
#include "runtime/cli/app.hpp"

#include <algorithm>
#include <iostream>
#include <optional>

#include "reporting/log.hpp"
#include "config/options.hpp"
#include "data/batch_record.hpp"
#include "runtime/cli/commands.hpp"
#include "runtime/cli/model_build.hpp"
#include "runtime/cli/node_system.hpp"
#include "runtime/cli/status_client.hpp"
#include "runtime/net/connect.hpp"
#include "runtime/node/node.hpp"
#include "runtime/node/reference_trainer.hpp"
#include "runtime/node/signals.hpp"

namespace downpour {
namespace {

bool is_chief(const options& opts) {
  return opts.role == role_kind::local || (opts.role == role_kind::worker && opts.task == 0 && !opts.join);
}

// Exit codes (docs/stopping.md): a stopped or diverged job ends every node
// of it with the job's code; anything else is a failure of this node.
int exit_code(const caf::error& err) {
  if (err == errc::interrupted) return exit_stopped;
  if (err == errc::diverged) return exit_diverged;
  if (err == errc::join_refused) return exit_bad_config;
  return exit_failed;
}

job_status status_of(int code) {
  if (code == exit_stopped) return job_status::stopped;
  if (code == exit_diverged) return job_status::diverged;
  return job_status::failed;
}

// A failure is this node's ERROR line; a job ended early was explained by the
// chief (the supervisor's line), so the others only say it ended. The chief
// writes summary.json in every case.
int fail(const options& opts, const logger& log, const caf::error& err) {
  const int code = exit_code(err);
  if (code == exit_failed || code == exit_bad_config)
    log.error(describe(err));
  else if (!is_chief(opts))
    log.info("the job ended: " + describe(err));
  if (is_chief(opts)) {
    run_summary s;
    s.status = status_of(code);
    s.error = describe(err);
    report_final(opts, s, log);
  }
  return code;
}

int report(const options& opts, const job_result& result, const logger& log) {
  const run_summary& summary = result.summary;
  if (result.reported_before) {
    log.info("the job completed before at global step " + std::to_string(summary.global_step) +
             "; its summary.json is kept and nothing is trained (--fresh trains again)");
    log.info(final_line(summary) + " (completed before; summary.json kept)");
    return exit_completed;
  }
  report_final(opts, summary, log);
  return summary.status == job_status::stopped ? exit_stopped : exit_completed;
}

// The reference loop is the dense job's oracle: a sparse variable lives on shards.
int run_reference_role(const options& opts, const job_model& job, const logger& log) {
  if (const auto& rows = job.layout.row_variables(); !rows.empty())
    throw config_error("--role=reference trains dense models only, and model " + job.layout.kind() +
                       " has the sparse variable " + rows.front().name +
                       " (expected --role=local, ps or worker)");
  if (job.data.stream)
    throw config_error("--role=reference trains on data in memory, and --data-format=" +
                       data_format_name(opts) + " streams (expected --input=memory)");
  log_stream steps{log, log_level::info};
  auto result = run_reference(opts, job, steps);
  report_final(opts, result.summary, log);
  return 0;
}

// Every node builds the model first: a ps for the layout alone, the others
// for their data (loaded once per process).
int run_node(const options& opts, const application& app, const logger& log,
             stop_switch& stops) {
  const node_hooks hooks{{}, &stops};
  if (opts.role == role_kind::ps) {
    const model_layout layout = build_ps_layout(opts, app);
    node_system sys{opts, layout};
    auto r = run_ps_node(sys.get(), opts, layout, hooks);
    const int code = r ? exit_completed : fail(opts, log, r.error());
    sys.end(code, log);
    return code;
  }
  const job_model job = build_job_model(opts, load_job_data(opts, app.readers), app.make_model);
  switch (opts.role) {
    case role_kind::reference:
      return run_reference_role(opts, job, log);
    case role_kind::worker: {
      node_system sys{opts, job.layout};
      auto r = run_worker_node(sys.get(), opts, job, hooks);
      const int code = !r               ? fail(opts, log, r.error())
                       : is_chief(opts) ? report(opts, *r, log)
                                        : exit_completed;
      sys.end(code, log);
      return code;
    }
    case role_kind::ps:
      break;
    case role_kind::local: {
      auto r = run_local(opts, job, hooks);
      if (!r) return fail(opts, log, r.error());
      return report(opts, *r, log);
    }
  }
  return exit_failed;
}

// Training: every failure is a log line of this node. SIGTERM and SIGINT
// stop it cleanly (runtime/node/signals.hpp); the watcher starts before any
// other thread. The reference trainer keeps the default: it dies at once.
int train(const options& opts, const application& app) {
  // A joiner learns its task index from the chief (runtime/node/join.hpp).
  const logger log = opts.join ? logger{"worker:joining", opts.log_threshold, opts.log_format}
                               : node_logger(opts, opts.role, opts.task);
  stop_switch stops;
  std::optional<signal_watcher> watcher;
  if (opts.role != role_kind::reference) watcher.emplace(stops, log,
                    std::chrono::milliseconds(static_cast<std::int64_t>(opts.stop_grace_s * 1000)));
  try {
    check_batch_record_environment();
    return run_node(opts, app, log, stops);
  } catch (const config_error& e) {
    log.error(e.what());
    return exit_bad_config;
  } catch (const std::exception& e) {
    log.error(e.what());
    return exit_failed;
  }
}

// The formats --data-format takes besides the built-in ones; a reader
// shadowing a built-in format would make its name mean two things.
known_formats formats_of(const data_readers& readers) {
  known_formats formats;
  for (const auto& [name, reader] : readers) {
    const auto built_in = {"idx", "csv", "libsvm", "criteo"};
    if (name.empty() || std::find(built_in.begin(), built_in.end(), name) != built_in.end())
      throw config_error("config: a data reader is registered as '" + name +
                         "' (expected a name other than idx, csv, libsvm, criteo and '')");
    formats.registered.push_back(name);
  }
  return formats;
}

}  // namespace

int run_downpour(int argc, char** argv, const application& app) {
  try {
    auto opts = parse_options(argc, argv, std::cout, formats_of(app.readers));
    if (!opts) return 0;
    if (opts->command == command_kind::status) return run_status(*opts, std::cout, std::cerr);
    if (opts->command != command_kind::train)
      return run_command(*opts, app, std::cout, std::cerr);
    return train(*opts, app);
  } catch (const config_error& e) {
    // Before any logger: bounded and escaped like a log line (a bad value is quoted).
    std::cerr << "downpour: " << printable_line(e.what()) << std::endl;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "downpour: " << printable_line(e.what()) << std::endl;
    return 1;
  }
}

int run_downpour(int argc, char** argv, const model_factory& make_model) {
  return run_downpour(argc, argv, application{make_model, {}});
}

}  // namespace downpour
