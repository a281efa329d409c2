"""A flax.nnx + optax language model trained by code written for JAX, run unmodified on
mjax (`python -m mjax`) and on JAX, each in a process of its own: losses and step times.

    python benchmarks/flax_lm.py [--d 1024] [--layers 4] [--seq 256] [--batch 16]

The script's model is ordinary flax user code (`nnx.Embed`, `nnx.MultiHeadAttention`
with a causal mask, `nnx.LayerNorm`, `nnx.Linear`, `optax.adamw`, `nnx.jit` of the train
step). It needs flax and optax installed. Nothing is set: on a TPU machine both libraries
pick the chip.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

CHILD = r'''
import json, sys, time
import numpy as np
import jax, jax.numpy as jnp
import optax
from flax import nnx

d, layers, seq, batch, vocab, steps = (int(v) for v in sys.argv[1:7])

class Block(nnx.Module):
    def __init__(self, rngs):
        self.ln1 = nnx.LayerNorm(d, rngs=rngs)
        self.attn = nnx.MultiHeadAttention(num_heads=8, in_features=d, decode=False,
                                           rngs=rngs)
        self.ln2 = nnx.LayerNorm(d, rngs=rngs)
        self.up = nnx.Linear(d, 4 * d, rngs=rngs)
        self.down = nnx.Linear(4 * d, d, rngs=rngs)

    def __call__(self, x, mask):
        x = x + self.attn(self.ln1(x), mask=mask)
        return x + self.down(jax.nn.gelu(self.up(self.ln2(x))))

class LM(nnx.Module):
    def __init__(self, rngs):
        self.embed = nnx.Embed(vocab, d, rngs=rngs)
        self.blocks = nnx.List([Block(rngs) for _ in range(layers)])
        self.ln = nnx.LayerNorm(d, rngs=rngs)

    def __call__(self, tokens):
        x = self.embed(tokens)
        mask = nnx.make_causal_mask(tokens)
        for b in self.blocks:
            x = b(x, mask)
        return self.embed.attend(self.ln(x))

model = LM(nnx.Rngs(0))
optimizer = nnx.Optimizer(model, optax.adamw(1e-3), wrt=nnx.Param)

@nnx.jit
def train_step(model, optimizer, tokens):
    def loss_fn(model):
        logits = model(tokens[:, :-1])
        return optax.softmax_cross_entropy_with_integer_labels(logits, tokens[:, 1:]).mean()
    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss

tokens = jnp.asarray(np.random.default_rng(0).integers(0, vocab, (batch, seq + 1)),
                     jnp.int32)
t0 = time.perf_counter()
losses = [float(train_step(model, optimizer, tokens))]
first = time.perf_counter() - t0
for _ in range(4):
    losses.append(float(train_step(model, optimizer, tokens)))
times = []
for _ in range(steps):
    t0 = time.perf_counter()
    jax.block_until_ready(train_step(model, optimizer, tokens))
    times.append(time.perf_counter() - t0)
print(json.dumps({"device": str(jax.devices()[0]), "losses": losses, "first call s": first,
                  "step ms": 1e3 * sorted(times)[len(times) // 2]}))
'''


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, default=1024)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--seq", type=int, default=256)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--vocab", type=int, default=8192)
    parser.add_argument("--steps", type=int, default=20)
    a = parser.parse_args()
    sizes = [str(v) for v in (a.d, a.layers, a.seq, a.batch, a.vocab, a.steps)]
    results = {}
    for lib, prefix in (("mjax", ["-m", "mjax"]), ("jax", [])):
        t0 = time.perf_counter()
        run = subprocess.run([sys.executable, *prefix, "-c", CHILD, *sizes],
                             capture_output=True, text=True)
        if run.returncode:
            print(f"{lib} failed:\n{run.stderr[-3000:]}")
            continue
        results[lib] = json.loads(run.stdout.strip().splitlines()[-1])
        results[lib]["process s"] = time.perf_counter() - t0
    print(f"flax.nnx + optax LM: d {a.d}, {a.layers} layers, seq {a.seq}, batch {a.batch}")
    for lib, r in results.items():
        print(f"  {lib:5s} {r['device']}: step {r['step ms']:.2f} ms, first call "
              f"{r['first call s']:.2f} s, losses {[round(v, 5) for v in r['losses']]}")
    if len(results) == 2:
        m, j = results["mjax"], results["jax"]
        print(f"  step ratio mjax/jax: {m['step ms'] / j['step ms']:.3f}; first call ratio: "
              f"{m['first call s'] / j['first call s']:.3f}; losses equal: "
              f"{m['losses'] == j['losses']}")


if __name__ == "__main__":
    main()
