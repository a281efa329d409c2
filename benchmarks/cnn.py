"""A small convnet's training step, mjax vs JAX side by side in one run (ratio mjax/JAX).

    python benchmarks/cnn.py [--quick] [--batch 64]

The net: conv 3x3 (8 channels) -> relu -> 2x2 max-pool -> conv 3x3 (16) -> relu -> 2x2
max-pool -> dense (10 classes), on 28x28 one-channel images, NCHW; softmax
cross-entropy; the step is jit(value_and_grad) plus SGD. Reported: trace+transform+lower
and XLA compile of the step, the first call, and the steady state (rounds interleaved
between the two libraries, as in benchmarks/run.py). Before timing, both libraries train
5 steps from the same parameters and the losses are compared step for step.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from run import Steady, lower_and_compile, side_by_side


def cnn_params(rng):
    def he(shape, fan_in):
        return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)
    return {"c1": he((8, 1, 3, 3), 9), "b1": np.zeros(8, np.float32),
            "c2": he((16, 8, 3, 3), 72), "b2": np.zeros(16, np.float32),
            "w": he((16 * 7 * 7, 10), 16 * 7 * 7), "b": np.zeros(10, np.float32)}


def make_step(lib, jnp, lr=0.01):
    lax = lib.lax

    def pool(x):
        return lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")

    def conv(x, w, b):
        y = lax.conv_general_dilated(x, w, (1, 1), "SAME")
        return jnp.maximum(y + b[None, :, None, None], 0.0)

    def loss(p, x, labels):
        h = pool(conv(x, p["c1"], p["b1"]))
        h = pool(conv(h, p["c2"], p["b2"]))
        logits = h.reshape(h.shape[0], -1) @ p["w"] + p["b"]
        top = jnp.max(logits, axis=1, keepdims=True)
        logp = logits - top - jnp.log(jnp.sum(jnp.exp(logits - top), axis=1, keepdims=True))
        return -jnp.mean(jnp.sum(logp * labels, axis=1))

    def step(p, x, labels):
        value, g = lib.value_and_grad(loss)(p, x, labels)
        return value, {k: p[k] - lr * g[k] for k in p}
    return step


def suite(lib, jnp, rng, batch, quick):
    out = {}
    params = lib.device_put(cnn_params(rng))
    images = lib.device_put(rng.standard_normal((batch, 1, 28, 28)).astype(np.float32))
    labels = lib.device_put(np.eye(10, dtype=np.float32)[rng.integers(0, 10, batch)])
    step = make_step(lib, jnp)

    out.update(lower_and_compile(lib, step, (params, images, labels), "CNN step"))

    train = lib.jit(step)
    t0 = time.perf_counter()
    lib.block_until_ready(train(params, images[: batch // 2], labels[: batch // 2]))
    out["CNN step first call"] = time.perf_counter() - t0

    losses, p = [], params
    for _ in range(5):
        value, p = train(p, images, labels)
        losses.append(float(value))
    out["losses"] = losses
    out["CNN step steady"] = Steady(lambda: lib.block_until_ready(
        train(params, images, labels)), 5 if quick else 20)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    side_by_side(lambda lib, jnp, rng: suite(lib, jnp, rng, args.batch, args.quick),
                 f"benchmark (batch {args.batch})", "5 SGD steps", args.quick)


if __name__ == "__main__":
    main()
