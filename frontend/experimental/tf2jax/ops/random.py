"""Random ops, drawn with mjax.random from the key passed as `fn(..., rng=key)`.

As in tf2jax, the numbers are not TF's (TF's Philox streams are not reproduced): each
random node draws from `fold_in(rng, hash of its name)`, folded with the op's seed for
the stateless ops (so the seed still matters), with the distribution TF specifies.
"""
from __future__ import annotations

import zlib

import numpy as np

import mjax.random as random
from mjax.experimental.tf2jax.ops.registry import cast, register, static_ints


def _random():
    return random


def _key(ctx, node, *seeds):
    if ctx.rng is None:
        raise ValueError(f"tf2jax: the TensorFlow op '{node.op}' (node '{node.name}' "
                         f"{ctx.where}) draws random numbers: call the converted "
                         f"function with a PRNG key, fn(..., rng=mjax.random.key(0))")
    random = _random()
    key = random.fold_in(ctx.rng, zlib.crc32(node.name.encode()) & 0x7FFFFFFF)
    for s in seeds:
        for v in np.asarray(s).reshape(-1) if isinstance(s, np.ndarray) else \
                cast(s, np.uint32).reshape(-1):
            key = random.fold_in(key, v)
    return key


def _shape(shape):
    return static_ints(shape, "the shape of a random op")


@register("RandomUniform")
def _uniform(ctx, node, shape):
    return _random().uniform(_key(ctx, node), _shape(shape), node.attrs["dtype"])


@register("RandomStandardNormal")
def _normal(ctx, node, shape):
    return _random().normal(_key(ctx, node), _shape(shape), node.attrs["dtype"])


@register("TruncatedNormal")
def _truncated(ctx, node, shape):
    return _random().truncated_normal(_key(ctx, node), -2.0, 2.0, _shape(shape),
                                      node.attrs["dtype"])


@register("RandomUniformInt")
def _uniform_int(ctx, node, shape, lo, hi):
    return _random().randint(_key(ctx, node), _shape(shape), lo, hi,
                             np.dtype(node.attrs.get("Tout", np.int32)))


@register("StatelessRandomGetKeyCounter")
def _get_key_counter(ctx, node, seed):
    # The seed stands for TF's (key, counter): only the draw's key depends on it here.
    return seed, np.zeros((2,), np.uint32)


@register("StatelessRandomUniformV2")
def _stateless_uniform_v2(ctx, node, shape, key, counter, alg):
    return _random().uniform(_key(ctx, node, key, counter), _shape(shape),
                             node.attrs["dtype"])


@register("StatelessRandomNormalV2")
def _stateless_normal_v2(ctx, node, shape, key, counter, alg):
    return _random().normal(_key(ctx, node, key, counter), _shape(shape),
                            node.attrs["dtype"])


@register("StatelessTruncatedNormalV2")
def _stateless_truncated_v2(ctx, node, shape, key, counter, alg):
    return _random().truncated_normal(_key(ctx, node, key, counter), -2.0, 2.0,
                                      _shape(shape), node.attrs["dtype"])


@register("StatelessRandomUniformIntV2")
def _stateless_uniform_int_v2(ctx, node, shape, key, counter, alg, lo, hi):
    return _random().randint(_key(ctx, node, key, counter), _shape(shape), lo, hi,
                             np.dtype(node.attrs["dtype"]))


@register("StatelessRandomUniform")
def _stateless_uniform(ctx, node, shape, seed):
    return _random().uniform(_key(ctx, node, seed), _shape(shape), node.attrs["dtype"])


@register("StatelessRandomNormal")
def _stateless_normal(ctx, node, shape, seed):
    return _random().normal(_key(ctx, node, seed), _shape(shape), node.attrs["dtype"])


@register("StatelessTruncatedNormal")
def _stateless_truncated(ctx, node, shape, seed):
    return _random().truncated_normal(_key(ctx, node, seed), -2.0, 2.0, _shape(shape),
                                      node.attrs["dtype"])
