#!/usr/bin/python3
"""The original job's math in NumPy, written from TensorFlow 1.x's definitions,
independently of Downpour's C++ code (it imports and calls nothing of it).

It starts from initial parameters (`downpour export` of a step-0 checkpoint),
replays the batches a Downpour run recorded (DOWNPOUR_RECORD_BATCHES=DIR makes
every worker write DIR/batches-W.txt: one line per pushed gradient, "W STAMP
i0 ... iB-1", the worker, the global step its parameters were read at, and the
examples' indices in the training split), and writes the parameters and their
moving averages after --steps global steps as an .npz: the variables under
their TensorFlow names, the shadows under NAME/ExponentialMovingAverage.

Everything is float32, as in TensorFlow (variables, data and every op):
  model      h = relu(x W1 + b1), logits = h W2 + b2
  loss       mean sparse softmax cross-entropy + l2 * (sum(W1^2) + sum(W2^2)) / 2
             (l2_regularizer = scale * l2_loss, l2_loss(t) = sum(t^2) / 2; weights only)
  lr         learning_rate * decay_rate^(step / decay_steps), step read before
             the update's increment of global_step (tf.train.exponential_decay)
  sgd        var -= lr * grad (GradientDescentOptimizer)
  sync       the mean of one gradient per worker, all taken at the step's
             parameters: the accumulator's sum divided by the count
             (SyncReplicasOptimizer, ConditionalAccumulator)
  async      one worker: each gradient is one global step; with --pipeline=on
             step t's gradient is taken at the parameters of step t-1 (the pull
             for step t leaves before step t-1's push), else at those of step t
  ema        after each global step's update, toward the new parameters, with
             decay = min(ema_decay, (1 + n) / (10 + n)), n = that step before
             its increment; shadow -= (shadow - var) * (1 - decay); shadows
             start at the initial values (ExponentialMovingAverage, num_updates)
  data       images scaled by 1/255 in float32; the first validation_size
             training examples are held out (read_data_sets)

Several --segment directories replay a run that was stopped and resumed: each
continues at the global step where the previous one ended (a resumed Downpour
worker starts a fresh batcher, so its record starts afresh too).
"""

import argparse
import gzip
import os
import re
import sys

import numpy as np

F = np.float32
NAMES = ["layer1/weights", "layer1/biases", "layer2/weights", "layer2/biases"]


class GoldenError(Exception):
    pass


def read_idx(path, magic):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    dims = magic - 2048
    header = np.frombuffer(data, dtype=">u4", count=1 + dims)
    if header[0] != magic:
        raise GoldenError(f"{path}: magic {header[0]}, expected {magic}")
    shape = tuple(int(d) for d in header[1:])
    values = np.frombuffer(data, dtype=np.uint8, offset=4 * (1 + dims))
    if values.size != np.prod(shape):
        raise GoldenError(f"{path}: {values.size} bytes of data, expected {np.prod(shape)}")
    return values.reshape(shape)


def find(data_dir, name):
    for candidate in (name, name + ".gz"):
        path = os.path.join(data_dir, candidate)
        if os.path.exists(path):
            return path
    raise GoldenError(f"{data_dir}: no {name} (nor {name}.gz)")


def training_split(data_dir, validation_size):
    images = read_idx(find(data_dir, "train-images-idx3-ubyte"), 2051)
    labels = read_idx(find(data_dir, "train-labels-idx1-ubyte"), 2049)
    return images.reshape(images.shape[0], -1)[validation_size:], labels[validation_size:]


def examples(data, indices):
    images, labels = data
    # DataSet: astype(float32), then multiply by 1.0 / 255.0 (a float32 op).
    return images[indices].astype(F) * F(1.0 / 255.0), labels[indices].astype(np.int64)


def read_segment(directory):
    """Per worker, its recorded (stamp, example indices) in push order."""
    files = sorted(f for f in os.listdir(directory) if re.fullmatch(r"batches-\d+\.txt", f))
    if not files:
        raise GoldenError(f"{directory}: no batches-W.txt records")
    workers = {}
    for name in files:
        with open(os.path.join(directory, name)) as f:
            for number, line in enumerate(f, 1):
                fields = line.split()
                if len(fields) < 3:
                    raise GoldenError(f"{directory}/{name}:{number}: malformed record")
                worker, stamp = int(fields[0]), int(fields[1])
                indices = np.array([int(i) for i in fields[2:]], dtype=np.int64)
                workers.setdefault(worker, []).append((stamp, indices))
    return [workers[w] for w in sorted(workers)]


def matmul(a, b):
    """a @ b in float32 with every entry summed in index order, each product
    rounded before it is added: the reference BLAS's sgemm, written out so that
    the result does not depend on which BLAS NumPy loads (OpenBLAS, which
    `libtorch-dev` brings, blocks the sums differently; at a ReLU input within
    rounding of zero that puts the golden's unit on the other side of the kink)."""
    out = np.zeros((a.shape[0], b.shape[1]), dtype=F)
    product = np.empty_like(out)
    for k in range(a.shape[1]):
        np.multiply(a[:, k, None], b[None, k], out=product)
        out += product
    return out


def gradient(params, x, y, l2, kinks):
    w1, b1, w2, b2 = params
    pre = matmul(x, w1) + b1
    kinks.see(pre)
    hidden = np.maximum(pre, F(0))
    logits = matmul(hidden, w2) + b2
    shifted = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    softmax = e / e.sum(axis=1, keepdims=True)
    # d(mean cross-entropy)/d(logits) = (softmax - onehot) / batch
    dlogits = softmax
    dlogits[np.arange(len(y)), y] -= F(1)
    dlogits /= F(len(y))
    g_w2 = matmul(hidden.T, dlogits) + F(l2) * w2
    g_b2 = dlogits.sum(axis=0)
    dhidden = matmul(dlogits, w2.T) * (hidden > 0)  # ReluGrad: where the output is > 0
    g_w1 = matmul(x.T, dhidden) + F(l2) * w1
    g_b1 = dhidden.sum(axis=0)
    return [g_w1, g_b1, g_w2, g_b2]


class Kinks:
    """The hidden-layer input closest to the ReLU's kink over the replay: where
    it is within rounding of zero, another float32 implementation may see the
    unit on where this one sees it off, and the two then differ on it."""

    def __init__(self):
        self.closest, self.where = np.inf, ""

    def see(self, pre):
        k = np.unravel_index(np.argmin(np.abs(pre)), pre.shape)
        if abs(pre[k]) < self.closest:
            self.closest, self.where = float(abs(pre[k])), f"unit {k[1]} at step {self.step}"


class Job:
    def __init__(self, args, params):
        self.args = args
        self.kinks = Kinks()
        self.params = params
        self.shadows = [p.copy() for p in params]
        self.step = 0
        self.history = {0: [p.copy() for p in params]}  # async: parameters by step

    def learning_rate(self):
        a = self.args
        p = F(self.step) / F(a.lr_decay_steps)
        return F(a.learning_rate) * np.power(F(a.lr_decay_rate), p)

    def gradient(self, params, batch):
        self.kinks.step = self.step
        return gradient(params, *batch, self.args.l2, self.kinks)

    def apply(self, grads):
        lr = self.learning_rate()
        for p, g in zip(self.params, grads):
            p -= lr * g
        n = F(self.step)
        decay = min(F(self.args.ema_decay), (F(1) + n) / (F(10) + n))
        for s, p in zip(self.shadows, self.params):
            s -= (s - p) * (F(1) - decay)
        self.step += 1


def check_stamp(stamp, expected, where):
    if stamp != expected:
        raise GoldenError(f"{where}: recorded at step {stamp}, but TensorFlow's order takes "
                          f"this gradient at step {expected}")


def run_async(job, segment, data):
    if len(segment) != 1:
        raise GoldenError("async: the golden replays one worker (the order in which shards "
                          "apply several workers' pushes is not recorded)")
    start = job.step
    job.history = {start: [p.copy() for p in job.params]}
    delay = 1 if job.args.pipeline == "on" else 0
    for j, (stamp, indices) in enumerate(segment[0]):
        at = max(start, job.step - delay)
        check_stamp(stamp, at, f"async gradient {j} of the segment from step {start}")
        job.apply(job.gradient(job.history[at], examples(data, indices)))
        job.history = {s: p for s, p in job.history.items() if s >= job.step - delay}
        job.history[job.step] = [p.copy() for p in job.params]


def run_sync(job, segment, data):
    if len(segment) != job.args.replicas:
        raise GoldenError(f"sync: records of {len(segment)} workers, expected {job.args.replicas}")
    rounds = {len(records) for records in segment}
    if len(rounds) != 1:
        raise GoldenError(f"sync: workers recorded different numbers of gradients {sorted(rounds)}")
    for j in range(rounds.pop()):
        total = None
        for w, records in enumerate(segment):
            stamp, indices = records[j]
            check_stamp(stamp, job.step, f"sync gradient {j} of worker {w}")
            g = job.gradient(job.params, examples(data, indices))
            total = g if total is None else [t + gi for t, gi in zip(total, g)]
        job.apply([t / F(job.args.replicas) for t in total])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--init", required=True, help=".npz of the initial parameters (downpour export)")
    ap.add_argument("--segment", action="append", required=True,
                    help="directory of one run's batches-W.txt records; repeat for a resumed run")
    ap.add_argument("--steps", type=int, required=True, help="global steps the records must make")
    ap.add_argument("--out", required=True)
    ap.add_argument("--mode", choices=["async", "sync"], default="async")
    ap.add_argument("--pipeline", choices=["on", "off"], default="off")
    ap.add_argument("--replicas", type=int, default=1, help="sync: gradients per step")
    ap.add_argument("--validation-size", type=int, default=5000)
    ap.add_argument("--learning-rate", type=float, default=0.01)
    ap.add_argument("--lr-decay-rate", type=float, default=0.99)
    ap.add_argument("--lr-decay-steps", type=int, default=600)
    ap.add_argument("--l2", type=float, default=1e-4)
    ap.add_argument("--ema-decay", type=float, default=0.99)
    args = ap.parse_args()
    try:
        init = np.load(args.init)
        params = [init[name].astype(F) for name in NAMES]
        data = training_split(args.data_dir, args.validation_size)
        job = Job(args, params)
        for directory in args.segment:
            segment = read_segment(directory)
            (run_sync if args.mode == "sync" else run_async)(job, segment, data)
        if job.step != args.steps:
            raise GoldenError(f"the records make {job.step} global steps, expected {args.steps}")
        arrays = dict(zip(NAMES, job.params))
        arrays.update({name + "/ExponentialMovingAverage": s for name, s in zip(NAMES, job.shadows)})
        np.savez(args.out, **arrays)
    except (GoldenError, OSError, KeyError, ValueError, IndexError) as e:
        sys.exit(f"golden: {e}")
    print(f"golden: {job.step} global steps ({args.mode}) written to {args.out}; the ReLU input "
          f"closest to zero: {job.kinks.closest:.3g} ({job.kinks.where})")


if __name__ == "__main__":
    main()
