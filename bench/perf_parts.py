#!/usr/bin/env python3
"""Splits the CPU of a downpour process, profiled with perf's call graphs, into parts.

  perf record -F 1999 --call-graph dwarf,16384 -o ps.data -- downpour --role=ps ...
  perf script -i ps.data -F comm,tid,period,ip,sym,dso > ps.txt
  bench/perf_parts.py ps.txt ps KEYS [v]      (or: worker.txt worker KEYS)

Each sample goes to the first part, in the order listed, whose pattern matches some
frame of its stack; KEYS (the keys pulled in the job) turns CPU-s into ns per key;
a fourth argument lists each part's hottest leaf functions. A manual tool: the
table it made is in docs/performance.md ("Per key, by part").
"""
import re, sys, collections
def samples(path):
    cur = None
    for line in open(path):
        if not line.strip():
            if cur: yield cur
            cur = None; continue
        if not line[0].isspace():
            cur = {'period': int(line.split()[-1]), 'frames': []}
        else:
            m = re.match(r'\s*[0-9a-f]+ (.*?)(?: \(([^()]*)\))?$', line.rstrip())
            cur['frames'].append(m.group(1) if m else line.strip())
    if cur: yield cur
PS = [
 ('end: snapshot for the checkpoint (dump, sort, send)', r'shard_rows::snapshot|row_tables::dump|sparse_table::dump|add_snapshot_rows|snapshot_of|operator\(\)<downpour::shard_snapshot'),
 ('table growth (new rows, rehash, page faults)', r'sparse_table::create|grow_slots|fill_initial'),
 ('AdaGrad update', r'row_update::apply'),
 ('push: rows through remembered slots', r'sparse_table::apply|row_for_update|row_found'),
 ('pull: hash lookup + row copy into reply', r'sparse_table::read'),
 ('key checks, finite check, claim, remember', r'check_keys|all_finite|shard_rows::claim|refs_within|spend_pull|shard_rows::remember'),
 ('serialization (CAF, blob write/read)', r'caf::message::save|caf::message::load|serializer|deserializer|save_tensor|load_tensor|save_values|load_values|apply_raw|type_erased_value_impl.*::(load|save)|metered<'),
 ('CAF network thread, BASP + kernel TCP/epoll/pipe', r'default_multiplexer|basp|scribe|stream_impl|policy::tcp|epoll|pipe_reader|__libc_send|__libc_recv|tcp_|sendto|recvfrom'),
 ('CAF scheduling, mailboxes, futex wake-ups', r'scheduler::|scheduled_actor|futex|pthread_cond|enqueue|finish_task_switch|__schedule|response_promise'),
 ('start-up, loading, other', r'.'),
]
WORKER = [
 ('end: evaluation on the test file (rows into a table, scoring)', r'evaluate_test'),
 ('end: the final model collected and checkpointed', r'snapshot_detail|save_checkpoint|encode_checkpoint|checkpoint'),
 ('input: reading, parsing libsvm, copying examples', r'background_batches|example_stream|parse_libsvm'),
 ('gather: the batch keys (sort, unique, row index)', r'logreg_batch::gather|key_sorter|hashed_batch::load|touched_r'),
 ('compute: logreg loss and gradient', r'loss_and_|logits|logistic_loss|score_logits|sparse_logreg'),
 ('scatter: cutting rows per shard, outgoing pushes', r'cut_rows|outgoing_pushes|rows_for|split_rows|worker_rows'),
 ('serialization (CAF, blob write/read)', r'caf::message::save|caf::message::load|serializer|deserializer|save_tensor|load_tensor|save_values|load_values|apply_raw|type_erased_value_impl.*::(load|save)|metered<'),
 ('CAF network thread, BASP + kernel TCP/epoll/pipe', r'default_multiplexer|basp|scribe|stream_impl|policy::tcp|epoll|pipe_reader|__libc_send|__libc_recv|tcp_|sendto|recvfrom'),
 ('CAF scheduling, mailboxes, futex wake-ups', r'scheduler::|scheduled_actor|futex|pthread_cond|enqueue|finish_task_switch|__schedule|response_promise'),
 ('start-up, loading, other', r'.'),
]
def attribute(path, parts):
    pats = [(n, re.compile(p)) for n, p in parts]
    out = collections.Counter(); tot = 0; leaf = collections.defaultdict(collections.Counter)
    for s in samples(path):
        tot += s['period']
        name = parts[-1][0]
        for n, p in pats:
            if any(p.search(f) for f in s['frames']):
                name = n; break
        out[name] += s['period']
        if s['frames']: leaf[name][s['frames'][0][:80]] += s['period']
    return tot, out, leaf
if __name__ == '__main__':
    path, kind, keys = sys.argv[1], sys.argv[2], float(sys.argv[3])
    tot, out, leaf = attribute(path, PS if kind == 'ps' else WORKER)
    print('%s total %.3f CPU-s sampled' % (path, tot / 1e9))
    for n, _ in (PS if kind == 'ps' else WORKER):
        v = out[n]
        print('%-55s %6.3f s %5.1f%% %6.1f ns/key' % (n, v / 1e9, 100 * v / tot, v / keys))
        if len(sys.argv) > 4:
            for l, c in leaf[n].most_common(6): print('      %5.1f%% %s' % (100 * c / tot, l))
