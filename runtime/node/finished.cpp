#include "runtime/node/finished.hpp"

#include "actors/finished_job.hpp"
#include "config/durations.hpp"
#include "io/input_file.hpp"
#include "runtime/net/connect.hpp"
#include "runtime/node/hello.hpp"

namespace downpour {

namespace {

// summary.json is a few hundred bytes: a file far longer is none of ours.
constexpr std::uint64_t max_summary_bytes = 1 << 20;

}  // namespace

std::optional<run_summary> finished_before(const options& opts) {
  if (opts.fresh) return std::nullopt;
  std::string text;
  try {
    text = read_input(opts.checkpoint_dir + "/summary.json", max_summary_bytes);
  } catch (const input_error&) {
    return std::nullopt;  // none yet, or not a regular file of ours: no finished job
  }
  auto s = parse_summary_json(text);
  if (!s || s->status != job_status::completed || s->global_step < opts.last_step)
    return std::nullopt;
  return s;
}

job_result finished_result(run_summary done) {
  job_result r;
  r.summary = std::move(done);
  r.reported_before = true;
  return r;
}

caf::expected<job_result> serve_finished(caf::actor_system& sys, const options& opts,
                                         const model_layout& layout,
                                         const std::vector<shard_actor>& shards, run_summary done,
                                         const std::function<void(std::uint16_t)>& on_listening) {
  const logger log = node_logger(opts, role_kind::worker, 0);
  if (auto err = check_peers(sys, opts, layout, shards, timespan_of(opts.connect_timeout_s)))
    return err;
  auto responder = spawn_finished_job(
      sys, finished_job_config{job_fingerprint(opts, layout), opts.last_step,
                               opts.worker_hosts.size() - 1, final_line(done), log,
                               opts.cluster_secret});
  caf::scoped_actor self{sys};
  auto port = publish_on(sys, opts, responder, opts.worker_hosts[0], "the chief (worker 0)");
  if (!port) {
    self->send_exit(responder, caf::exit_reason::user_shutdown);
    return port.error();
  }
  if (on_listening) on_listening(*port);
  self->monitor(responder);
  bool told_all = false;
  self->receive([&](caf::down_msg&) { told_all = true; },
                caf::after(timespan_of(opts.connect_timeout_s)) >> [] {});
  if (!told_all) {
    log.warn("not every worker asked within " + seconds_text(opts.connect_timeout_s) +
             "; the job stays completed");
    self->send_exit(responder, caf::exit_reason::user_shutdown);
  }
  for (const auto& s : shards) self->send(s, stop_atom_v);
  return finished_result(std::move(done));
}

}  // namespace downpour
