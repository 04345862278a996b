#!/usr/bin/env python3
"""dlrm and wide_deep as plain PyTorch: the independent implementation
bench_ctr compares Downpour's models against (docs/models.md).

The same shapes, initial distributions and optimizers as model/dlrm_model.cpp
and model/wide_deep_model.cpp, the same Criteo-format files read in the same
order (file by file, line by line, consecutive batches, the last one of a
pass smaller), on one core. Only the hash of a categorical value into its
table's rows is this script's own (a feature's row differs from Downpour's,
its statistics do not). Prints one line, "result: {json}", with the test AUC
and log loss and the training examples/s, by the clock and per second of
the process's CPU time (training only: the files are read and hashed before
the clocks start, and the test set is scored after they stop).

  ctr_torch.py --model dlrm|wide_deep --train FILE [FILE ...] --test FILE
               [--batch-size 128] [--learning-rate 0.1] [--epochs 1]
               [--sparse-rows N] [--embedding-dim 16] [--bottom-units 512,256,64]
               [--top-units 512,256] [--hidden-units 500] [--seed 1]
"""

import argparse
import json
import math
import sys
import time

import numpy as np
import torch
from torch import nn

INTEGER_FIELDS = 13
CATEGORICAL_FIELDS = 26
EMBEDDING_STDDEV = 0.05
# TF's DNNLinearCombinedClassifier: FTRL at min(0.2, 1/sqrt(linear columns))
# (26 fields and 25 crosses), AdaGrad at 0.05 for the deep part; both
# accumulators start at 0.1.
LINEAR_COLUMNS = 2 * CATEGORICAL_FIELDS - 1
FTRL_LR = min(0.2, 1.0 / math.sqrt(LINEAR_COLUMNS))
ADAGRAD_LR = 0.05
INITIAL_ACCUMULATOR = 0.1


def units(text):
    try:
        values = [int(u) for u in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} (expected units like 512,256)")
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} (expected units of at least 1)")
    return values


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", choices=["dlrm", "wide_deep"], required=True)
    p.add_argument("--train", nargs="+", required=True)
    p.add_argument("--test", required=True)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--learning-rate", type=float, default=0.1, help="dlrm's SGD")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--sparse-rows", type=int, default=1 << 16)
    p.add_argument("--embedding-dim", type=int, default=16)
    p.add_argument("--bottom-units", type=units, default=[512, 256, 64])
    p.add_argument("--top-units", type=units, default=[512, 256])
    p.add_argument("--hidden-units", type=units, default=[500])
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args(argv)
    for name in ("batch_size", "epochs", "sparse_rows", "embedding_dim"):
        if getattr(a, name) < 1:
            p.error(f"--{name.replace('_', '-')} {getattr(a, name)} (expected at least 1)")
    return a


# ---- reading Criteo lines --------------------------------------------------

def read_criteo(paths):
    """Labels, the integer fields' log(1 + x) (0 when missing or not above 0)
    and the categorical values as integers (-1 when missing), in file order."""
    labels, integers, categoricals = [], [], []
    for path in paths:
        try:
            f = open(path, encoding="ascii")
        except OSError as e:
            sys.exit(f"ctr_torch: {path}: {e.strerror}")
        with f:
            for number, line in enumerate(f, 1):
                parts = line.rstrip("\r\n").split("\t")
                if parts == [""]:
                    continue
                if len(parts) != 1 + INTEGER_FIELDS + CATEGORICAL_FIELDS:
                    sys.exit(f"ctr_torch: {path}:{number}: {len(parts)} fields, expected 40")
                try:
                    labels.append(int(parts[0]))
                    integers.append([int(x) if x else 0 for x in parts[1:14]])
                    categoricals.append([int(x, 16) if x else -1 for x in parts[14:]])
                except ValueError as e:
                    sys.exit(f"ctr_torch: {path}:{number}: {e} (expected Criteo's integer and "
                             "hexadecimal fields)")
    x = np.asarray(integers, dtype=np.float64)
    numeric = np.where(x > 0, np.log1p(np.maximum(x, 0)), 0.0).astype(np.float32)
    return (np.asarray(labels, dtype=np.float32), numeric,
            np.asarray(categoricals, dtype=np.int64))


def mix(x):
    """SplitMix64's finaliser over uint64 arrays (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        x = x ^ (x >> np.uint64(30))
        x = x * np.uint64(0xBF58476D1CE4E5B9)
        x = x ^ (x >> np.uint64(27))
        x = x * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def salted(values, salt):
    with np.errstate(over="ignore"):
        return mix(values.astype(np.uint64) ^ mix(np.uint64(salt) * np.uint64(0x9E3779B97F4A7C15)))


def rows_of(hashes, present, rows):
    """A hash's row of a table of `rows` rows; `rows` (the padding row) when absent."""
    return torch.from_numpy(np.where(present, (hashes % np.uint64(rows)).astype(np.int64), rows))


def field_rows(categoricals, rows, salt):
    """Each example's row in each field's table: (examples, 26)."""
    fields = np.arange(CATEGORICAL_FIELDS, dtype=np.uint64)[None, :] + np.uint64(salt)
    present = categoricals >= 0
    return rows_of(salted(categoricals, 0) ^ mix(fields), present, rows)


def cross_rows(categoricals, rows):
    """Each example's row of the crosses C1xC2 .. C25xC26 in one table: (examples, 25)."""
    a, b = categoricals[:, :-1], categoricals[:, 1:]
    present = (a >= 0) & (b >= 0)
    with np.errstate(over="ignore"):
        h = mix(salted(a, 1000) ^ salted(b, 2000)
                ^ np.arange(CATEGORICAL_FIELDS - 1, dtype=np.uint64)[None, :])
    return rows_of(h, present, rows)


# ---- the models ------------------------------------------------------------

def dense_layer(n_in, n_out):
    """model/ctr_layers.hpp's ctr_dense: weights truncated normal (beyond 2
    stddev redrawn) of stddev sqrt(2 / (in + out)), biases 0."""
    layer = nn.Linear(n_in, n_out)
    std = math.sqrt(2.0 / (n_in + n_out))
    nn.init.trunc_normal_(layer.weight, std=std, a=-2 * std, b=2 * std)
    nn.init.zeros_(layer.bias)
    return layer


def mlp(n_in, hidden, n_out, relu_last):
    layers, width = [], n_in
    for u in hidden:
        layers += [dense_layer(width, u), nn.ReLU()]
        width = u
    layers.append(dense_layer(width, n_out))
    if relu_last:
        layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def table(rows, width, stddev):
    """rows + 1 rows: the last one is the padding row of an absent feature,
    zeros and never updated (a bag of no rows)."""
    t = nn.Embedding(rows + 1, width, padding_idx=rows, sparse=True)
    with torch.no_grad():
        if stddev > 0:
            nn.init.trunc_normal_(t.weight, std=stddev, a=-2 * stddev, b=2 * stddev)
        else:
            t.weight.zero_()
        t.weight[rows].zero_()
    return t


class DLRM(nn.Module):
    def __init__(self, a):
        super().__init__()
        d = a.embedding_dim
        self.bottom = mlp(INTEGER_FIELDS, a.bottom_units, d, relu_last=True)
        self.embeddings = nn.ModuleList(
            table(a.sparse_rows, d, EMBEDDING_STDDEV) for _ in range(CATEGORICAL_FIELDS))
        features = 1 + CATEGORICAL_FIELDS
        i, j = torch.tril_indices(features, features, offset=-1)  # (1,0), (2,0), (2,1), ...
        self.register_buffer("pair_i", i, persistent=False)
        self.register_buffer("pair_j", j, persistent=False)
        self.top = mlp(d + features * (features - 1) // 2, a.top_units, 1, relu_last=False)

    def forward(self, numeric, rows):
        x = self.bottom(numeric)
        t = torch.stack([x] + [e(rows[:, k]) for k, e in enumerate(self.embeddings)], dim=1)
        z = torch.bmm(t, t.transpose(1, 2))[:, self.pair_i, self.pair_j]
        return self.top(torch.cat([x, z], dim=1)).squeeze(1)

    def optimizers(self, a):
        dense = list(self.bottom.parameters()) + list(self.top.parameters())
        return [torch.optim.SGD(dense, lr=a.learning_rate),
                torch.optim.SGD(self.embeddings.parameters(), lr=a.learning_rate)]


class WideDeep(nn.Module):
    def __init__(self, a):
        super().__init__()
        d = a.embedding_dim
        self.features = nn.EmbeddingBag(a.sparse_rows + 1, 1, mode="sum", sparse=True,
                                        padding_idx=a.sparse_rows)
        self.crosses = nn.EmbeddingBag(a.sparse_rows + 1, 1, mode="sum", sparse=True,
                                       padding_idx=a.sparse_rows)
        with torch.no_grad():
            self.features.weight.zero_()
            self.crosses.weight.zero_()
        self.embeddings = nn.ModuleList(
            table(a.sparse_rows, d, EMBEDDING_STDDEV) for _ in range(CATEGORICAL_FIELDS))
        self.deep = mlp(INTEGER_FIELDS + CATEGORICAL_FIELDS * d, a.hidden_units, 1,
                        relu_last=False)

    def forward(self, numeric, rows, linear_rows, cross_rows_):
        linear = self.features(linear_rows) + self.crosses(cross_rows_)
        deep = torch.cat([numeric] + [e(rows[:, k]) for k, e in enumerate(self.embeddings)], 1)
        return (linear + self.deep(deep)).squeeze(1)

    def optimizers(self, a):
        return [Ftrl([self.features.weight, self.crosses.weight], lr=FTRL_LR),
                torch.optim.Adagrad(list(self.embeddings.parameters()) +
                                    list(self.deep.parameters()), lr=ADAGRAD_LR,
                                    initial_accumulator_value=INITIAL_ACCUMULATOR, eps=0.0)]


class Ftrl(torch.optim.Optimizer):
    """TF 1.x's FtrlOptimizer (ApplyFtrl / SparseApplyFtrl) on sparse
    gradients, rows not in the gradient untouched; accumulators n start at
    0.1, the linear terms z at 0:
        n' = n + g^2;  z += g - (n'^-p - n^-p) / lr * w;  n = n'
        w = |z| <= l1 ? 0 : (sign(z) l1 - z) / (n^-p / lr + 2 l2)"""

    def __init__(self, params, lr, l1=0.0, l2=0.0, lr_power=-0.5):
        super().__init__(params, dict(lr=lr, l1=l1, l2=l2, lr_power=lr_power))
        for group in self.param_groups:
            for w in group["params"]:
                self.state[w]["n"] = torch.full_like(w, INITIAL_ACCUMULATOR)
                self.state[w]["z"] = torch.zeros_like(w)

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            lr, l1, l2, p = group["lr"], group["l1"], group["l2"], -group["lr_power"]
            for w in group["params"]:
                if w.grad is None:
                    continue
                g = w.grad.coalesce()
                idx, gv = g.indices()[0], g.values()
                n, z = self.state[w]["n"], self.state[w]["z"]
                n_old, z_rows, w_rows = n[idx], z[idx], w[idx]
                n_new = n_old + gv * gv
                z_rows += gv - (n_new.pow(p) - n_old.pow(p)) / lr * w_rows
                quadratic = n_new.pow(p) / lr + 2 * l2
                w_new = torch.where(z_rows.abs() > l1, (torch.sign(z_rows) * l1 - z_rows)
                                    / quadratic, torch.zeros_like(z_rows))
                n[idx], z[idx], w[idx] = n_new, z_rows, w_new


# ---- training and scoring --------------------------------------------------

def inputs(a, numeric, categoricals):
    rows = field_rows(categoricals, a.sparse_rows, 0)
    if a.model == "dlrm":
        return [torch.from_numpy(numeric), rows]
    return [torch.from_numpy(numeric), rows, field_rows(categoricals, a.sparse_rows, 77),
            cross_rows(categoricals, a.sparse_rows)]


def auc(labels, scores):
    """The AUC of scores for the labels, ties counted half (average ranks)."""
    order = np.argsort(scores, kind="mergesort")
    s = scores[order]
    ranks = np.empty(len(s))
    first = 0
    while first < len(s):
        last = first
        while last + 1 < len(s) and s[last + 1] == s[first]:
            last += 1
        ranks[order[first:last + 1]] = 0.5 * (first + last) + 1
        first = last + 1
    positives = labels > 0.5
    n_pos, n_neg = positives.sum(), (~positives).sum()
    if n_pos == 0 or n_neg == 0:
        return 0.0
    return float((ranks[positives].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def train(a, model, labels, xs):
    loss_fn = nn.BCEWithLogitsLoss()
    optimizers = model.optimizers(a)
    y = torch.from_numpy(labels)
    n, steps, loss_sum = len(labels), 0, 0.0
    began, began_cpu = time.perf_counter(), time.process_time()
    for _ in range(a.epochs):
        for first in range(0, n, a.batch_size):
            last = min(n, first + a.batch_size)
            for o in optimizers:
                o.zero_grad(set_to_none=True)
            loss = loss_fn(model(*[x[first:last] for x in xs]), y[first:last])
            loss.backward()
            for o in optimizers:
                o.step()
            loss_sum += loss.item()
            steps += 1
    return (time.perf_counter() - began, time.process_time() - began_cpu, steps,
            loss_sum / max(steps, 1))


def score(model, labels, xs):
    with torch.no_grad():
        z = torch.cat([model(*[x[f:f + 4096] for x in xs]) for f in range(0, len(labels), 4096)])
    z = z.double().numpy()
    p = 1.0 / (1.0 + np.exp(-z))
    eps = 1e-12
    log_loss = -np.mean(labels * np.log(p + eps) + (1 - labels) * np.log(1 - p + eps))
    return auc(labels, z), float(log_loss)


def main(argv):
    a = parse_args(argv)
    torch.set_num_threads(1)
    torch.manual_seed(a.seed)
    labels, numeric, categoricals = read_criteo(a.train)
    test_labels, test_numeric, test_categoricals = read_criteo([a.test])
    xs = inputs(a, numeric, categoricals)
    test_xs = inputs(a, test_numeric, test_categoricals)
    model = DLRM(a) if a.model == "dlrm" else WideDeep(a)
    seconds, cpu_seconds, steps, mean_loss = train(a, model, labels, xs)
    test_auc, test_log_loss = score(model, test_labels, test_xs)
    examples = len(labels) * a.epochs
    print("result: " + json.dumps({
        "model": a.model, "examples": examples, "steps": steps, "train_s": seconds,
        "examples_per_s": examples / seconds, "train_cpu_s": cpu_seconds,
        "examples_per_cpu_s": examples / cpu_seconds, "mean_train_loss": mean_loss,
        "test_auc": test_auc, "test_log_loss": test_log_loss, "torch": torch.__version__,
        "threads": torch.get_num_threads()}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
