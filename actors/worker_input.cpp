// A worker's batches: drawn at the start of each step (or, pipelined with a
// row variable, one step ahead), from memory or from its share of the
// streamed files; a streamed worker first learns from the shards where its
// reading stood (docs/input.md).
#include "actors/worker_state.hpp"
#include "config/durations.hpp"

namespace downpour {
namespace {

// Bad data ends the job as a signal does: the supervisor stops it with a
// checkpoint at the step reached (the positions saved point before the bad
// line), every node exits 4; this worker says why.
void stop_for_data(worker_pointer self, const std::string& why) {
  auto& st = self->state;
  st.cfg.log.error(why);
  self->send(st.cfg.supervisor, stop_atom_v,
             "a data error on worker " + std::to_string(st.cfg.index) + ": " + why);
  leave_job(self, caf::make_error(errc::interrupted, why));
}

// A streamed worker says when a pass of its share is done: at info with
// --passes, else (pass after pass of small data) at debug.
void note_pass(worker_state& st, const batch& b) {
  st.pass_examples += b.size;
  const std::uint64_t pass = st.source->position().pass;
  if (pass == st.pass) return;
  const auto level = st.cfg.stream->passes > 0 ? log_level::info : log_level::debug;
  if (st.cfg.log.enabled(level))
    st.cfg.log.write(level, "worker " + std::to_string(st.cfg.index) + ": pass " +
                                std::to_string(st.pass + 1) + " of its share done (" +
                                std::to_string(st.pass_examples) + " examples)");
  st.pass = pass;
  st.pass_examples = 0;
}

}  // namespace

namespace {

enum class drawn { batch, none, bad_data };

// The source's next batch: read where it is by a dense model, kept in slot
// by a model with row variables (the source reuses its own).
drawn draw_from_source(worker_pointer self, std::size_t slot) {
  auto& st = self->state;
  if (st.passes_done) return drawn::none;
  const auto began = std::chrono::steady_clock::now();
  const batch* b = nullptr;
  try {
    b = st.source->next();
  } catch (const data_error& e) {
    st.passes_done = true;  // never read on: the job stops
    stop_for_data(self, e.what());
    return drawn::bad_data;
  }
  if (!b) {
    st.passes_done = true;
    return drawn::none;
  }
  if (st.cfg.stream) note_pass(st, *b);
  if (slot == st.hand) st.unpushed_draw = true;
  if (has_rows(st.cfg))
    keep_batch(st, st.held[slot], *b, st.cfg.stream ? st.source->position() : read_position{});
  else
    st.current = b;
  meter_input(st, seconds_since(began));
  return drawn::batch;
}

}  // namespace

bool draw(worker_pointer self) {
  auto& st = self->state;
  if (st.prefetched) {
    st.hand = 1 - st.hand;
    st.prefetched = false;
    st.current = in_hand(st).data;
    st.unpushed_draw = true;
    return true;
  }
  switch (draw_from_source(self, st.hand)) {
    case drawn::batch:
      if (has_rows(st.cfg)) st.current = in_hand(st).data;
      return true;
    case drawn::bad_data:
      return false;
    case drawn::none:
      break;
  }
  st.cfg.log.info("worker " + std::to_string(st.cfg.index) +
                  ": its passes over the training files are done; it leaves the job");
  // Once every shard answered its pushes (leave_job waits for that): a push
  // refused then gives its ticket back, and there is no batch to push again.
  leave_job(self, caf::none);
  return false;
}

bool draw_next(worker_pointer self) {
  auto& st = self->state;
  switch (draw_from_source(self, 1 - st.hand)) {
    case drawn::batch:
      st.prefetched = true;
      return true;
    case drawn::bad_data:
      return false;
    case drawn::none:
      return true;  // the batch in hand is pushed first; draw() then leaves
  }
  return true;
}

namespace {

// A streamed worker reads on from its newest position any shard holds: the
// one of its last push, or the checkpoint's (docs/input.md).
void open_stream(worker_pointer self, const read_position& at) {
  auto& st = self->state;
  try {
    st.source = training_batches(*st.cfg.stream, st.cfg.index, st.cfg.batch_size, st.cfg.batch_seed, at);
  } catch (const data_error& e) {
    return stop_for_data(self, e.what());
  }
  st.pass = at.pass;
  const auto who = "worker " + std::to_string(st.cfg.index);
  const auto pass = std::to_string(at.pass + 1);
  if (at.plan == st.cfg.stream->train.at(st.cfg.index).fingerprint)
    st.cfg.log.info(who + ": reads on in pass " + pass + " after " + std::to_string(at.examples) +
                    " examples of it");
  else if (at.plan != 0)
    st.cfg.log.warn(who + ": the training files or workers changed since its position was saved; "
                    "pass " + pass + " starts over");
  begin_training(self);
}

}  // namespace

void start_stream(worker_pointer self) {
  auto& st = self->state;
  auto newest = std::make_shared<read_position>();
  auto missing = std::make_shared<std::size_t>(st.cfg.shards.size());
  for (auto& shard : st.cfg.shards)
    self->request(shard, caf::infinite, position_atom_v, st.cfg.index)
        .then(
            [=](read_position& p) {
              *newest = newer(*newest, p);
              if (--*missing == 0) open_stream(self, *newest);
            },
            [=](caf::error& err) { request_failed(self, "position request failed", err); });
}

}  // namespace downpour
