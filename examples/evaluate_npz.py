#!/usr/bin/env python3
"""Evaluates a model exported by `downpour export` on the MNIST test set with NumPy.

    downpour export --checkpoint-dir logs/log_async --out model.npz
    python3 examples/evaluate_npz.py model.npz [--data-dir DIR]

The .npz holds TensorFlow's layout, [in, out] weights so that a batch of rows
multiplies from the left (y = x @ W + b):
    layer1/weights [784, hidden]   layer1/biases [hidden]
    layer2/weights [hidden, 10]    layer2/biases [10]
The model is logits = relu(x @ W1 + b1) @ W2 + b2, with x the pixels scaled to
[0, 1] (uint8 / 255). It prints the line `downpour eval` ends with, without
the EMA column: "test_accuracy=A" (A to 4 decimals).
"""
import argparse
import gzip
import os
import sys

import numpy as np


def read_idx(path):
    """An IDX file (gzip or plain) as a uint8 array of its dimensions."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] != 8:
        sys.exit("evaluate_npz: %s is not an IDX file of unsigned bytes" % path)
    dims = data[3]
    shape = tuple(int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims))
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def find(data_dir, name):
    for candidate in (name + ".gz", name):
        path = os.path.join(data_dir, candidate)
        if os.path.exists(path):
            return path
    sys.exit("evaluate_npz: no %s(.gz) in %s" % (name, data_dir))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("npz")
    parser.add_argument("--data-dir", default=os.environ.get(
        "DOWNPOUR_DATA_DIR", "/usr/share/datasets/fashion-mnist"))
    args = parser.parse_args()
    images = read_idx(find(args.data_dir, "t10k-images-idx3-ubyte"))
    labels = read_idx(find(args.data_dir, "t10k-labels-idx1-ubyte"))
    model = np.load(args.npz)
    w1, b1 = model["layer1/weights"], model["layer1/biases"]
    w2, b2 = model["layer2/weights"], model["layer2/biases"]
    x = images.reshape(len(images), -1).astype(np.float32) * np.float32(1.0 / 255.0)
    if x.shape[1] != w1.shape[0]:
        sys.exit("evaluate_npz: the model takes %d inputs, the images have %d"
                 % (w1.shape[0], x.shape[1]))
    hidden = np.maximum(x @ w1 + b1, np.float32(0))
    logits = hidden @ w2 + b2
    accuracy = float(np.mean(np.argmax(logits, axis=1) == labels))
    print("test_accuracy=%.4f" % accuracy)


if __name__ == "__main__":
    main()
