// The exchange's messages to its shard: the queued pushes as one push_batch
// with their pulls merged, then one pull per step asked for, and each
// trainer's part of the answers.
#include <algorithm>
#include <memory>
#include <set>
#include <stdexcept>
#include <utility>

#include "actors/exchange_state.hpp"
#include "protocol/pull_merge.hpp"

namespace downpour {
namespace {

// One message's pulls of rows merged: the union of their keys for the
// smallest worker index, the others its sharers.
struct row_merge {
  merged_keys keys;
  row_pull pull;
};

row_merge merge_pulls(const std::vector<const row_pull*>& pulls, std::int64_t min_step) {
  std::vector<const std::vector<std::uint64_t>*> lists;
  std::vector<std::uint32_t> workers;
  for (const auto* p : pulls) {
    lists.push_back(&p->keys.keys);
    workers.push_back(p->worker);
  }
  std::sort(workers.begin(), workers.end());
  row_merge out{merge_keys(lists), {}};
  out.pull.min_step = min_step;
  out.pull.worker = workers.front();
  out.pull.keys = key_list{out.keys.keys};
  out.pull.sharers.assign(workers.begin() + 1, workers.end());
  return out;
}

// One message to the shard, carrying that many trainers' requests and the
// merged row pull, if any.
void count_message(exchange_counts& c, std::size_t requests, const std::optional<row_merge>& m) {
  ++c.messages;
  c.requests += requests;
  if (!m) return;
  for (const auto& one : m->keys.at) c.keys_asked += one.size();
  c.keys_sent += m->keys.keys.size();
}

// The reply to a merged pull cut into each puller's, in the merge's order.
caf::expected<std::vector<pull_reply>> split_reply(const exchange_state& st, const row_merge& m,
                                                   pull_reply& r) {
  std::vector<floats> parts;
  try {
    parts = split_rows(m.keys, r.rows.values, st.cfg.rows);
  } catch (const std::exception& e) {
    return caf::make_error(errc::shape_mismatch, e.what());
  }
  std::vector<pull_reply> out;
  out.reserve(parts.size());
  for (auto& p : parts) out.emplace_back(r.step, r.params, false, tensor{std::move(p)});
  return out;
}

// The pushes as queued, sent as one batch (answered at once by the shard).
struct push_group {
  std::vector<queued_push> queued;
  std::optional<row_merge> merge;  // the push_pulls' pulls
};

// The rows of the push_pulls among the pushes, in their order.
caf::expected<std::vector<pull_reply>> rows_of(const exchange_state& st, const push_group& g,
                                               push_batch_reply& r) {
  if (!g.merge) return std::vector<pull_reply>{};
  if (r.pull_refusal) return r.pull_refusal;
  if (r.pull.size() != 1)
    return caf::make_error(errc::shape_mismatch, "a push batch's pull answered without rows");
  return split_reply(st, *g.merge, r.pull.front());
}

void fail_pushes(exchange_pointer self, push_group& g, const caf::error& err);

void answer_pushes(exchange_pointer self, push_group& g, push_batch_reply& r) {
  auto& st = self->state;
  if (r.refusals.size() != g.queued.size())
    return fail_pushes(self, g,
                       caf::make_error(errc::shape_mismatch,
                                       "a push batch answered for " +
                                           std::to_string(r.refusals.size()) + " pushes of " +
                                           std::to_string(g.queued.size())));
  st.known_step = r.step;
  auto rows = rows_of(st, g, r);
  std::size_t next_pull = 0;
  for (std::size_t i = 0; i < g.queued.size(); ++i) {
    auto& q = g.queued[i];
    count_answered(st, q.from, wait_kind::quick);
    const caf::error& refusal = r.refusals[i];
    if (!q.pull) {
      if (refusal)
        q.alone.deliver(refusal);
      else
        q.alone.deliver(r.step);
    } else if (!rows) {
      q.with_pull.deliver(rows.error());
    } else {
      q.with_pull.deliver(push_pull_reply{r.step, refusal, std::move((*rows)[next_pull++])});
    }
  }
  maybe_flush(self);
}

void fail_pushes(exchange_pointer self, push_group& g, const caf::error& err) {
  for (auto& q : g.queued) {
    count_answered(self->state, q.from, wait_kind::quick);
    if (q.pull)
      q.with_pull.deliver(err);
    else
      q.alone.deliver(err);
  }
  maybe_flush(self);
}

void send_batch(exchange_pointer self, std::vector<queued_push> queued) {
  auto& st = self->state;
  auto g = std::make_shared<push_group>();
  g->queued = std::move(queued);
  push_batch batch;
  std::vector<const row_pull*> pulls;
  for (auto& q : g->queued) {
    count_sent(st, q.from, wait_kind::quick);
    batch.pushes.push_back(std::move(q.push));
    if (q.pull) pulls.push_back(&*q.pull);
  }
  if (!pulls.empty()) {
    g->merge = merge_pulls(pulls, 0);
    batch.pull.push_back(std::move(g->merge->pull));  // the split needs only the keys' places
  }
  count_message(st.counts, g->queued.size(), g->merge);
  self->request(st.cfg.shard, caf::infinite, push_atom_v, std::move(batch))
      .then([=](push_batch_reply& r) { answer_pushes(self, *g, r); },
            [=](caf::error& err) { fail_pushes(self, *g, err); });
}

// A trainer that pushes again before its push is answered (async dense
// pushes are not waited for) must not put two gradients in one batch: a
// node accepts messages of K gradients (basp_payload_bound), and a shard
// remembers one pull per trainer and message. So a batch ends where its
// trainer comes again, which keeps the arrival order.
std::vector<std::vector<queued_push>> one_per_trainer(std::vector<queued_push> queued) {
  std::vector<std::vector<queued_push>> out;
  std::set<caf::actor_addr> in_last;
  for (auto& q : queued) {
    if (out.empty() || !in_last.insert(q.from).second) {
      out.emplace_back();
      in_last = {q.from};
    }
    out.back().push_back(std::move(q));
  }
  return out;
}

// In order: CAF keeps the order of one actor's messages to another.
void send_pushes(exchange_pointer self) {
  for (auto& batch : one_per_trainer(std::exchange(self->state.pushes, {})))
    send_batch(self, std::move(batch));
}

// One message's pulls of a step: the dense parameters once for all, or
// rows merged for trainers that each ask once.
struct pull_group {
  std::int64_t min_step = 0;
  std::vector<queued_pull> queued;
  std::optional<row_merge> merge;
  wait_kind kind = wait_kind::quick;
};

void answer_pulls(exchange_pointer self, pull_group& g, pull_reply& r) {
  auto& st = self->state;
  st.known_step = std::max(st.known_step, r.step);
  caf::expected<std::vector<pull_reply>> rows{std::vector<pull_reply>{}};
  if (g.merge) rows = split_reply(st, *g.merge, r);
  for (std::size_t i = 0; i < g.queued.size(); ++i) {
    auto& q = g.queued[i];
    count_answered(st, q.from, g.kind);
    if (!rows)
      q.promise.deliver(rows.error());
    else if (g.merge)
      q.promise.deliver(std::move((*rows)[i]));
    else
      q.promise.deliver(r);
  }
  maybe_flush(self);
}

void fail_pulls(exchange_pointer self, pull_group& g, const caf::error& err) {
  for (auto& q : g.queued) {
    count_answered(self->state, q.from, g.kind);
    q.promise.deliver(err);
  }
  maybe_flush(self);
}

void send_pulls(exchange_pointer self, std::shared_ptr<pull_group> g) {
  auto& st = self->state;
  g->kind = wait_for_pull(st, g->min_step);
  for (const auto& q : g->queued) count_sent(st, q.from, g->kind);
  count_message(st.counts, g->queued.size(), g->merge);
  auto on_error = [=](caf::error& err) { fail_pulls(self, *g, err); };
  if (!g->merge) {
    self->request(st.cfg.shard, caf::infinite, pull_atom_v, g->min_step)
        .then([=](pull_reply& r) { answer_pulls(self, *g, r); }, on_error);
    return;
  }
  self->request(st.cfg.shard, caf::infinite, pull_atom_v, std::move(g->merge->pull))
      .then([=](pull_reply& r) { answer_pulls(self, *g, r); }, on_error);
}

// A step's pulls: the dense ones as one, the row pulls as few merged ones
// as hold each trainer once (a shard remembers one pull per trainer and
// message).
std::vector<std::shared_ptr<pull_group>> groups_of(std::int64_t min_step,
                                                   std::vector<queued_pull> queued) {
  std::vector<std::shared_ptr<pull_group>> out;
  auto dense = std::make_shared<pull_group>();
  dense->min_step = min_step;
  std::vector<std::shared_ptr<pull_group>> rows;
  for (auto& q : queued) {
    if (!q.rows) {
      dense->queued.push_back(std::move(q));
      continue;
    }
    auto lacks = [&](const pull_group& g) {
      return std::none_of(g.queued.begin(), g.queued.end(),
                          [&](const queued_pull& o) { return o.rows->worker == q.rows->worker; });
    };
    auto it = std::find_if(rows.begin(), rows.end(), [&](const auto& g) { return lacks(*g); });
    if (it == rows.end()) {
      rows.push_back(std::make_shared<pull_group>());
      rows.back()->min_step = min_step;
      it = rows.end() - 1;
    }
    (*it)->queued.push_back(std::move(q));
  }
  if (!dense->queued.empty()) out.push_back(dense);
  for (auto& g : rows) {
    std::vector<const row_pull*> pulls;
    for (const auto& q : g->queued) pulls.push_back(&*q.rows);
    g->merge = merge_pulls(pulls, min_step);
    out.push_back(g);
  }
  return out;
}

}  // namespace

std::string exchange_stats_line(std::size_t shard, const exchange_counts& c) {
  const double ratio =
      c.keys_sent == 0 ? 1.0 : static_cast<double>(c.keys_asked) / static_cast<double>(c.keys_sent);
  return "exchange to shard " + std::to_string(shard) + ": " + std::to_string(c.messages) +
         " messages carried " + std::to_string(c.requests) +
         " trainer requests; row pulls asked for " + std::to_string(c.keys_asked) + " keys, sent " +
         std::to_string(c.keys_sent) + " after dedup (ratio " + fixed_text(ratio, 3) + ")";
}

void flush(exchange_pointer self) {
  auto& st = self->state;
  if (!st.pushes.empty()) send_pushes(self);
  for (auto& [min_step, queued] : std::exchange(st.pulls, {}))
    for (auto& g : groups_of(min_step, std::move(queued))) send_pulls(self, std::move(g));
}

}  // namespace downpour
