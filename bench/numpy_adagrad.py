#!/usr/bin/env python3
"""The hashed logistic regression of bench_sparse's single-process loop
(bench/support/sparse_trainer.cpp), vectorised with NumPy: the reference the
loop's examples/s is compared with (bench_sparse_cluster).

    numpy_adagrad.py --data DIR [--rows-log2 20] [--lr 0.3] [--batch 100]

Same data, model and steps as the loop: each feature index hashed into one of
N = 2^rows-log2 rows (SplitMix64 with seed 0, model/sparse_hash.hpp), a bias,
AdaGrad with initial accumulator 0.1 on both, weights starting at 0, batches
of --batch examples within blocks of 65536 read in turn. The weights are two
dense float32 arrays of N (NumPy's natural form; the loop's table holds only
the rows pushed). Training time (wall, as the loop's; and CPU) covers
hashing and the steps, not parsing.
Prints one line, "result: {json}".
"""
import argparse
import json
import sys
import time

import numpy as np

BLOCK = 1 << 16
INITIAL_ACCUMULATOR = np.float32(0.1)
U64 = np.uint64


def mix64(x):
    """SplitMix64's finalizer over a uint64 array (wrapping arithmetic)."""
    x = x ^ (x >> U64(30))
    x = x * U64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> U64(27))
    x = x * U64(0x94D049BB133111EB)
    return x ^ (x >> U64(31))


def rows_of(features, bits):
    """The row of each feature: the high bits of mix64(0, feature) (mix64(0) is 0)."""
    h = mix64(features + U64(0x9E3779B97F4A7C15))
    return (h >> U64(64 - bits)).astype(np.int64)


def parse_block(lines, path):
    """A block of libsvm lines as (labels, features, values, offsets)."""
    text = b"".join(lines)
    if b"#" in text:
        sys.exit(f"numpy_adagrad: {path}: comments are not supported here")
    raw = np.frombuffer(text, dtype=np.uint8)
    ends = np.flatnonzero(raw == ord("\n"))
    if len(ends) != len(lines):
        sys.exit(f"numpy_adagrad: {path}: a line without its newline")
    colons = np.flatnonzero(raw == ord(":"))
    per_line = np.diff(np.searchsorted(colons, ends), prepend=0)
    numbers = np.fromstring(text.replace(b":", b" ").decode("ascii"), dtype=np.float64, sep=" ")
    if len(numbers) != len(lines) + 2 * len(colons):
        sys.exit(f"numpy_adagrad: {path}: a line that is not 'label index:value ...'")
    starts = np.concatenate(([0], np.cumsum(1 + 2 * per_line)[:-1]))
    labels = (numbers[starts] > 0).astype(np.float64)
    pairs = np.delete(numbers, starts).reshape(-1, 2)
    if len(pairs) and pairs[:, 0].max() >= 2.0**53:
        sys.exit(f"numpy_adagrad: {path}: a feature index of 2^53 or more (read as a double here)")
    offsets = np.concatenate(([0], np.cumsum(per_line)))
    return labels, pairs[:, 0].astype(U64), pairs[:, 1].astype(np.float32), offsets


def blocks(path):
    with open(path, "rb") as f:
        while True:
            lines = [line for _, line in zip(range(BLOCK), f)]
            if not lines:
                return
            yield parse_block(lines, path)


class model:
    def __init__(self, bits, lr):
        self.bits = bits
        self.lr = np.float32(lr)
        self.w = np.zeros(1 << bits, dtype=np.float32)
        self.acc = np.full(1 << bits, INITIAL_ACCUMULATOR, dtype=np.float32)
        self.bias = np.zeros(1, dtype=np.float32)
        self.bias_acc = np.full(1, INITIAL_ACCUMULATOR, dtype=np.float32)

    def step(self, y, rows, values, example):
        """One batch's AdaGrad step; returns its mean log loss before the step."""
        n = len(y)
        keys, slot = np.unique(rows, return_inverse=True)
        z = self.bias[0] + np.bincount(example, weights=values * self.w[keys][slot], minlength=n)
        dz = (1.0 / (1.0 + np.exp(-z)) - y) / n
        grad = np.bincount(slot, weights=dz[example] * values, minlength=len(keys))
        grad = grad.astype(np.float32)
        self.acc[keys] += grad * grad
        self.w[keys] -= self.lr * grad / np.sqrt(self.acc[keys])
        g = np.float32(dz.sum())
        self.bias_acc += g * g
        self.bias -= self.lr * g / np.sqrt(self.bias_acc)
        return float(np.mean(np.logaddexp(0.0, z) - y * z))

    def train_block(self, block, batch):
        labels, features, values, offsets = block
        rows = rows_of(features, self.bits)
        example = np.repeat(np.arange(len(labels)), np.diff(offsets))
        losses = []
        for begin in range(0, len(labels), batch):
            end = min(len(labels), begin + batch)
            at, to = offsets[begin], offsets[end]
            losses.append(self.step(labels[begin:end], rows[at:to], values[at:to],
                                    example[at:to] - begin))
        return losses

    def test_log_loss(self, block):
        labels, features, values, offsets = block
        example = np.repeat(np.arange(len(labels)), np.diff(offsets))
        z = self.bias[0] + np.bincount(example, weights=values * self.w[rows_of(features, self.bits)],
                                       minlength=len(labels))
        return float(np.sum(np.logaddexp(0.0, z) - labels * z)), len(labels)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", required=True, help="gen_libsvm's output directory")
    p.add_argument("--rows-log2", type=int, default=20)
    p.add_argument("--lr", type=float, default=0.3)
    p.add_argument("--batch", type=int, default=100)
    a = p.parse_args()
    if not 1 <= a.rows_log2 <= 34:
        sys.exit(f"numpy_adagrad: --rows-log2 {a.rows_log2} (expected 1 to 34: dense arrays of N)")
    if a.batch < 1 or not a.lr > 0:
        sys.exit(f"numpy_adagrad: --batch {a.batch} --lr {a.lr} (expected a batch >= 1, lr > 0)")
    m = model(a.rows_log2, a.lr)
    parse_s = train_s = train_cpu_s = 0.0
    examples, losses = 0, []
    parsing = time.perf_counter()
    for block in blocks(a.data + "/train.libsvm"):
        started, started_cpu = time.perf_counter(), time.process_time()
        parse_s += started - parsing
        losses += m.train_block(block, a.batch)
        parsing = time.perf_counter()
        train_s += parsing - started
        train_cpu_s += time.process_time() - started_cpu
        examples += len(block[0])
    loss_sum, tested = 0.0, 0
    for block in blocks(a.data + "/test.libsvm"):
        s, n = m.test_log_loss(block)
        loss_sum += s
        tested += n
    result = {"rows_log2": a.rows_log2, "examples": examples, "train_s": train_s,
              "examples_per_s": examples / train_s if train_s > 0 else 0.0,
              "train_cpu_s": train_cpu_s, "parse_s": parse_s, "train_loss": float(np.mean(losses)) if losses else 0.0,
              "test_log_loss": loss_sum / tested if tested else float("nan"),
              "numpy": np.__version__}
    print("result: " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
