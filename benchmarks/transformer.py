"""A small decoder-only transformer LM's training step, mjax vs JAX side by side in one run
(ratio mjax/JAX).

    python benchmarks/transformer.py [--quick] [--layers 4] [--batch 16]

The model: token embedding (a gather) plus learned positions, `layers` pre-norm blocks of
causal multi-head attention (4 heads) and a GELU MLP (4x), layer norm, tied output
projection, softmax cross-entropy on the next token; d=256, sequence 128, vocabulary 256.
The step is jit(value_and_grad) plus Adam. Reported: trace+transform+lower and XLA
compile of the step, the first call, and the steady state (rounds interleaved between the
two libraries). Before timing, both libraries train 5 steps from the same parameters and
the losses are compared step for step.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from run import Steady, lower_and_compile, side_by_side

D, HEADS, SEQ, VOCAB = 256, 4, 128, 256


def lm_params(rng, layers):
    def normal(*shape, scale=0.02):
        return (rng.standard_normal(shape) * scale).astype(np.float32)
    blocks = [{"ln1": np.ones(D, np.float32), "ln2": np.ones(D, np.float32),
               "qkv": normal(D, 3 * D), "proj": normal(D, D),
               "up": normal(D, 4 * D), "up_b": np.zeros(4 * D, np.float32),
               "down": normal(4 * D, D), "down_b": np.zeros(D, np.float32)}
              for _ in range(layers)]
    return {"embed": normal(VOCAB, D), "pos": normal(SEQ, D), "ln_f": np.ones(D, np.float32),
            "blocks": blocks}


def make_step(lib, jnp, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8):
    tree = lib.tree_util

    def layer_norm(x, g):
        mean = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
        return (x - mean) * lib.lax.rsqrt(var + 1e-5) * g

    def attention(x, p):
        b, t, _ = x.shape
        q, k, v = jnp.split(x @ p["qkv"], 3, axis=-1)
        heads = lambda z: z.reshape(b, t, HEADS, D // HEADS).transpose(0, 2, 1, 3)  # noqa: E731
        q, k, v = heads(q), heads(k), heads(v)
        scores = jnp.einsum("bhqd,bhkd->bhqk", q, k) / np.sqrt(D // HEADS)
        mask = jnp.tril(jnp.ones((t, t), bool))
        scores = jnp.where(mask, scores, -1e9)
        att = lib.nn.softmax(scores, axis=-1)
        out = jnp.einsum("bhqk,bhkd->bhqd", att, v).transpose(0, 2, 1, 3).reshape(b, t, D)
        return out @ p["proj"]

    def loss(params, tokens):
        x = params["embed"][tokens[:, :-1]] + params["pos"][: tokens.shape[1] - 1]
        for p in params["blocks"]:
            x = x + attention(layer_norm(x, p["ln1"]), p)
            h = lib.nn.gelu(layer_norm(x, p["ln2"]) @ p["up"] + p["up_b"])
            x = x + h @ p["down"] + p["down_b"]
        logits = layer_norm(x, params["ln_f"]) @ params["embed"].T
        logp = lib.nn.log_softmax(logits, axis=-1)
        picked = jnp.take_along_axis(logp, tokens[:, 1:, None], axis=-1)
        return -jnp.mean(picked)

    def step(params, opt, tokens):
        value, g = lib.value_and_grad(loss)(params, tokens)
        count, m, v = opt
        count = count + 1
        m = tree.tree_map(lambda m, g: b1 * m + (1 - b1) * g, m, g)
        v = tree.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
        scale = lr * jnp.sqrt(1 - b2 ** count) / (1 - b1 ** count)
        params = tree.tree_map(lambda p, m, v: p - scale * m / (jnp.sqrt(v) + eps),
                               params, m, v)
        return value, params, (count, m, v)
    return step


def first_call_and_losses(lib, train, params, opt, tokens, steps: int):
    """(seconds of train's first call, the losses of `steps` steps from `params`)."""
    t0 = time.perf_counter()
    lib.block_until_ready(train(params, opt, tokens))
    first = time.perf_counter() - t0
    losses, p, o = [], params, opt
    for _ in range(steps):
        value, p, o = train(p, o, tokens)
        losses.append(float(value))
    return first, losses


def suite(lib, jnp, rng, layers, batch, quick):
    out = {}
    params = lib.device_put(lm_params(rng, layers))
    zeros = lib.tree_util.tree_map(jnp.zeros_like, params)
    opt = (jnp.zeros((), jnp.float32), zeros, zeros)
    tokens = lib.device_put(rng.integers(0, VOCAB, (batch, SEQ + 1)).astype(np.int32))
    step = make_step(lib, jnp)

    out.update(lower_and_compile(lib, step, (params, opt, tokens), "LM step"))

    train = lib.jit(step)
    out["LM step first call"], out["losses"] = first_call_and_losses(
        lib, train, params, opt, tokens, 5)
    out["LM step steady"] = Steady(lambda: lib.block_until_ready(
        train(params, opt, tokens)), 3 if quick else 10)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--batch", type=int, default=16)
    args = parser.parse_args()
    side_by_side(lambda lib, jnp, rng: suite(lib, jnp, rng, args.layers, args.batch,
                                             args.quick),
                 f"benchmark ({args.layers} layers, batch {args.batch})", "5 Adam steps",
                 args.quick)


if __name__ == "__main__":
    main()
