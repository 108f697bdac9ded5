#!/usr/bin/env python3
"""Train the small test network of `comet partition` and export it.

A multilayer perceptron 64-64-64-10 (ReLU hidden layers, softmax output) is
trained on the 8x8 handwritten digits that scikit-learn ships (Debian:
python3-sklearn), with a fixed seed, and written as two NumPy .npz files:

  tests/data/digits_mlp.npz    layer0.weight, layer0.bias, layer1.weight, ...
                               each weight shaped (out, in), float32
                               (PyTorch's layout, comet's default)
  tests/data/digits_test.npz   x (n, 64) float32 pixels scaled to [0, 1],
                               y (n,) int64 labels 0-9: the held-out quarter

Both are committed, so the C tests need no Python. Rerun to regenerate:
    python3 tools/train_digits_mlp.py [OUTDIR]
"""
import sys

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else "tests/data"
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=0.25, random_state=0, stratify=y)
    mlp = MLPClassifier(hidden_layer_sizes=(64, 64), activation="relu",
                        alpha=1e-4, max_iter=400, random_state=0)
    mlp.fit(x_train, y_train)
    print("test accuracy %.4f" % mlp.score(x_test, y_test))
    members = {}
    for k, (w, b) in enumerate(zip(mlp.coefs_, mlp.intercepts_)):
        members["layer%d.weight" % k] = np.ascontiguousarray(w.T, dtype=np.float32)
        members["layer%d.bias" % k] = b.astype(np.float32)
    np.savez(outdir + "/digits_mlp.npz", **members)
    np.savez(outdir + "/digits_test.npz", x=x_test, y=y_test)


if __name__ == "__main__":
    main()
