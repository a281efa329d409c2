"""A flax.nnx + optax language-model training step written with jax alone, for
test_flax_like_step.py: the same computations flax's LayerNorm, MultiHeadAttention,
Linear/LinearGeneral, Embed (and Embed.attend) and make_causal_mask, jax.nn.gelu, optax's
softmax_cross_entropy_with_integer_labels and optax.adamw perform, op for op, without
needing flax or optax installed. (benchmarks/flax_lm.py runs the real libraries.)

    python flax_like_step.py OUT_PREFIX ATTENTION [STEPS]      (real jax)
    python -m mjax flax_like_step.py OUT_PREFIX ATTENTION [STEPS]

ATTENTION is "nn" (jax.nn.dot_product_attention, flax's default path) or "einsum" (the
einsum/where/softmax path flax takes with dropout or a sowing module). Writes
OUT_PREFIX.tpu.mlir (the step lowered for a TPU) and OUT_PREFIX.npz (losses and
parameters after STEPS steps on this machine's CPU).
"""
import sys

import numpy as np

import jax
import jax.numpy as jnp
from jax import lax

D, HEADS, LAYERS, SEQ, BATCH, VOCAB = 64, 4, 2, 16, 2, 128


def init(rng):
    def normal(*shape, scale=0.05):
        return jnp.asarray(rng.normal(size=shape) * scale, jnp.float32)

    def ln():
        return {"scale": jnp.ones(D, jnp.float32), "bias": jnp.zeros(D, jnp.float32)}
    hd = D // HEADS
    blocks = [{"ln1": ln(), "ln2": ln(),
               "q": {"kernel": normal(D, HEADS, hd), "bias": normal(HEADS, hd)},
               "k": {"kernel": normal(D, HEADS, hd), "bias": normal(HEADS, hd)},
               "v": {"kernel": normal(D, HEADS, hd), "bias": normal(HEADS, hd)},
               "out": {"kernel": normal(HEADS, hd, D), "bias": normal(D)},
               "up": {"kernel": normal(D, 4 * D), "bias": normal(4 * D)},
               "down": {"kernel": normal(4 * D, D), "bias": normal(D)}}
              for _ in range(LAYERS)]
    return {"embed": normal(VOCAB, D, scale=1.0), "blocks": blocks, "ln": ln()}


def layer_norm(p, x, eps=1e-6):
    # flax's _compute_stats (fast variance) and _normalize over the last axis
    mu = x.mean((-1,))
    mu2 = lax.square(x).mean((-1,))
    var = jnp.maximum(0.0, mu2 - lax.square(mu))
    stats = x.shape[:-1] + (1,)
    mean, var = mu.reshape(stats), var.reshape(stats)
    feature = (1,) * (x.ndim - 1) + (x.shape[-1],)
    y = x - mean
    mul = lax.rsqrt(var + eps)
    mul *= p["scale"].reshape(feature)
    y *= mul
    y += p["bias"].reshape(feature)
    return y


def linear_general(p, x, axes):
    # flax's LinearGeneral / Linear: one dot_general over the trailing axes, then the bias
    n = len(axes)
    dims = ((tuple(range(x.ndim - n, x.ndim)), tuple(range(n))), ((), ()))
    y = lax.dot_general(x, p["kernel"], dims)
    return y + jnp.reshape(p["bias"], (1,) * (y.ndim - p["bias"].ndim) + p["bias"].shape)


def causal_mask(tokens):
    # flax's make_causal_mask: greater_equal of positions, a head axis, as float32
    idxs = jnp.broadcast_to(jnp.arange(tokens.shape[-1], dtype=jnp.int32), tokens.shape)
    mask = jnp.greater_equal(jnp.expand_dims(idxs, -1), jnp.expand_dims(idxs, -2))
    return jnp.expand_dims(mask, -3).astype(jnp.float32)


def attention(p, x, mask, how):
    q = linear_general(p["q"], x, (-1,))
    k = linear_general(p["k"], x, (-1,))
    v = linear_general(p["v"], x, (-1,))
    if how == "nn":
        out = jax.nn.dot_product_attention(q, k, v, None, mask.astype(jnp.bool_))
    else:
        # flax's dot_product_attention_weights, then the weighted values
        q = q / jnp.sqrt(q.shape[-1]).astype(q.dtype)
        w = jnp.einsum("...qhd,...khd->...hqk", q, k)
        w = jnp.where(mask, w, jnp.finfo(w.dtype).min)
        w = jax.nn.softmax(w).astype(w.dtype)
        out = jnp.einsum("...hqk,...khd->...qhd", w, v)
    return linear_general(p["out"], out, (-2, -1))


def model(params, tokens, how):
    x = jnp.take(params["embed"], tokens, axis=0)
    mask = causal_mask(tokens)
    for b in params["blocks"]:
        x = x + attention(b, layer_norm(b["ln1"], x), mask, how)
        h = jax.nn.gelu(linear_general(b["up"], layer_norm(b["ln2"], x), (-1,)))
        x = x + linear_general(b["down"], h, (-1,))
    return jnp.dot(layer_norm(params["ln"], x), params["embed"].T)


def loss_fn(params, tokens, how):
    # optax's softmax_cross_entropy_with_integer_labels, then the mean
    logits, labels = model(params, tokens[:, :-1], how), tokens[:, 1:]
    label_logits = jnp.take_along_axis(logits, jnp.expand_dims(labels, -1), axis=-1)
    label_logits = label_logits.take(0, axis=-1)
    return (jax.nn.logsumexp(logits, axis=-1) - label_logits).mean()


def adamw(grads, state, params, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8, wd=1e-4):
    # optax.adamw: scale_by_adam, add_decayed_weights, scale by -lr
    count, mu, nu = state
    mu = jax.tree.map(lambda g, t: (1 - b1) * (g ** 1) + b1 * t, grads, mu)
    nu = jax.tree.map(lambda g, t: (1 - b2) * (g ** 2) + b2 * t, grads, nu)
    limit = jnp.iinfo(jnp.int32).max
    count = jnp.where(count < limit, count + 1, limit)
    c1, c2 = 1 - b1 ** count, 1 - b2 ** count
    mu_hat = jax.tree.map(lambda t: t / c1.astype(t.dtype), mu)
    nu_hat = jax.tree.map(lambda t: t / c2.astype(t.dtype), nu)
    updates = jax.tree.map(lambda m, v: m / (jnp.sqrt(v + 0.0) + eps), mu_hat, nu_hat)
    updates = jax.tree.map(lambda u, p: u + wd * p, updates, params)
    updates = jax.tree.map(lambda u: -lr * u, updates)
    return jax.tree.map(lambda p, u: jnp.asarray(p + u).astype(jnp.asarray(p).dtype),
                        params, updates), (count, mu, nu)


def make_step(how):
    def step(params, state, tokens):
        loss, grads = jax.value_and_grad(loss_fn)(params, tokens, how)
        params, state = adamw(grads, state, params)
        return loss, params, state
    return step


def main(prefix, how, steps):
    rng = np.random.default_rng(0)
    params = init(rng)
    zeros = jax.tree.map(jnp.zeros_like, params)
    state = (jnp.zeros((), jnp.int32), zeros, zeros)
    batches = [jnp.asarray(rng.integers(0, VOCAB, (BATCH, SEQ + 1)), jnp.int32)
               for _ in range(steps)]
    step = jax.jit(make_step(how))
    text = step.trace(params, state, batches[0]).lower(
        lowering_platforms=("tpu",)).as_text()
    with open(prefix + ".tpu.mlir", "w") as f:
        f.write(text)
    losses = []
    for tokens in batches:
        loss, params, state = step(params, state, tokens)
        losses.append(np.asarray(loss))
    out = {"losses": np.array(losses)}
    for i, leaf in enumerate(jax.tree.leaves((params, state))):
        out[f"leaf{i}"] = np.asarray(leaf)
    np.savez(prefix + ".npz", **out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 3)
