// The row messages of a sparse variable: a shard's part of its rows (init,
// restore, snapshot pages) and a worker's pull of a batch's rows; with the
// read positions that travel with pushes and snapshots.
#pragma once

#include <cstdint>
#include <vector>

#include "protocol/key_list.hpp"
#include "protocol/tensor.hpp"
#include "protocol/wire_bytes.hpp"
#include "caf/all.hpp"
#include "data/read_position.hpp"

namespace downpour {

// A shard's part of the model's sparse variable: the rows [first, last) it
// owns and, in an init or a snapshot, the rows it holds (keys ascending;
// accumulators: AdaGrad's, empty with SGD). Nothing for a dense model.
struct row_part {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  key_list keys;
  tensor values;
  tensor accumulators;
};

// A row_part inside a message that counts its own bytes (shard_init,
// shard_snapshot); alone, as a page, a row_part counts them itself.
struct row_part_fields {
  row_part& part;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, row_part_fields& x) {
  auto& p = x.part;
  return f(caf::meta::type_name("row_part"), p.first, p.last, p.keys, p.values, p.accumulators);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, row_part& x) {
  return metered(f, peer_kind::chief, [&] {
    row_part_fields fields{x};
    return inspect(f, fields);
  });
}

// Where a worker's streamed input stands (data/read_position.hpp).
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, read_position& x) {
  return f(caf::meta::type_name("read_position"), x.plan, x.pass, x.unit, x.offset, x.taken,
           x.batches, x.examples);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, worker_position& x) {
  return f(caf::meta::type_name("worker_position"), x.worker, x.at);
}

// Worker -> shard: a pull of the dense parameters and of the rows of the
// sparse variable the worker's next batch touches (ascending, unique, in
// the shard's row range), answered once the shard is at min_step. The
// trainers of one process pull merged (actors/exchange.hpp): sharers are
// the other trainers the keys are for, each of which may push any of them.
struct row_pull {
  std::int64_t min_step = 0;
  std::uint32_t worker = 0;
  key_list keys;
  std::vector<std::uint32_t> sharers;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, row_pull& x) {
  return metered(f, peer_kind::worker, [&] {
    return f(caf::meta::type_name("row_pull"), x.min_step, x.worker, x.keys, x.sharers);
  });
}

}  // namespace downpour
