"""Typed key arrays through jax.numpy's and lax's structural functions (mjax/lax/key_ops.py):
each result's key data equals the same function applied to the input's key data (with the
key's trailing dims), eagerly, under jit and under vmap; arithmetic on keys is JAX's
TypeError. NumPy is the oracle, so this file never imports jax."""
from __future__ import annotations

import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from mjax import lax

KEYS = mjax.random.split(mjax.random.key(0), 4)
DATA = np.asarray(mjax.random.key_data(KEYS))         # (4, 2) uint32


def _data(k):
    assert str(k.dtype) == "key<fry>", k.dtype
    return np.asarray(mjax.random.key_data(k))


M = np.array([True, False, True, False])
CASES = {   # name: (on keys, on their data (4, 2) -> the expected data)
    "broadcast_to": (lambda k: jnp.broadcast_to(k[0], (3,)),
                     lambda d: np.broadcast_to(d[0], (3, 2))),
    "concatenate": (lambda k: jnp.concatenate([k, k[::-1]]),
                    lambda d: np.concatenate([d, d[::-1]])),
    "stack": (lambda k: jnp.stack([k, k], axis=1), lambda d: np.stack([d, d], axis=1)),
    "expand_dims": (lambda k: jnp.expand_dims(k, -1), lambda d: d[:, None]),
    "reshape": (lambda k: jnp.reshape(k, (2, -1)), lambda d: d.reshape(2, 2, 2)),
    "squeeze": (lambda k: jnp.squeeze(k[None]), lambda d: d),
    "transpose": (lambda k: jnp.transpose(k.reshape(2, 2)),
                  lambda d: d.reshape(2, 2, 2).transpose(1, 0, 2)),
    "take": (lambda k: jnp.take(k, jnp.array([3, 0, 3])), lambda d: d[[3, 0, 3]]),
    "tile": (lambda k: jnp.tile(k, 2), lambda d: np.concatenate([d, d])),
    "repeat": (lambda k: jnp.repeat(k, 2), lambda d: np.repeat(d, 2, axis=0)),
    "flip": (lambda k: jnp.flip(k), lambda d: d[::-1]),
    "roll": (lambda k: jnp.roll(k, 1), lambda d: np.roll(d, 1, axis=0)),
    "swapaxes": (lambda k: jnp.swapaxes(k.reshape(2, 2), 0, 1),
                 lambda d: d.reshape(2, 2, 2).swapaxes(0, 1)),
    "split": (lambda k: jnp.split(k, 2)[1], lambda d: d[2:]),
    "where": (lambda k: jnp.where(M, k, k[::-1]), lambda d: np.where(M[:, None], d, d[::-1])),
    "index_array": (lambda k: k[jnp.array([2, 1])], lambda d: d[[2, 1]]),
    "index_bool": (lambda k: k[M], lambda d: d[M]),
    "at_set": (lambda k: k.at[1].set(k[3]), lambda d: np.stack([d[0], d[3], d[2], d[3]])),
    "at_get": (lambda k: k.at[1:].get(), lambda d: d[1:]),
    "full_like": (lambda k: jnp.full_like(k, 3), lambda d: np.full_like(d, 3)),
    "zeros_like": (lambda k: jnp.zeros_like(k), lambda d: np.zeros_like(d)),
    "lax.broadcast_in_dim": (lambda k: lax.broadcast_in_dim(k, (3, 4), (1,)),
                             lambda d: np.broadcast_to(d, (3, 4, 2))),
    "lax.slice": (lambda k: lax.slice(k, (1,), (4,), (2,)), lambda d: d[1:4:2]),
    "lax.dynamic_slice": (lambda k: lax.dynamic_slice(k, (1,), (2,)), lambda d: d[1:3]),
    "lax.dynamic_update_slice": (lambda k: lax.dynamic_update_slice(k, k[:1], (2,)),
                                 lambda d: np.stack([d[0], d[1], d[0], d[3]])),
    "lax.dynamic_index_in_dim": (lambda k: lax.dynamic_index_in_dim(k, 2, keepdims=False),
                                 lambda d: d[2]),
    "lax.select": (lambda k: lax.select(jnp.asarray(M), k, k[::-1]),
                   lambda d: np.where(M[:, None], d, d[::-1])),
    "lax.rev": (lambda k: lax.rev(k, (0,)), lambda d: d[::-1]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_structural_op_moves_whole_keys(name):
    on_keys, on_data = CASES[name]
    want = on_data(DATA)
    np.testing.assert_array_equal(_data(on_keys(KEYS)), want)
    np.testing.assert_array_equal(_data(mjax.jit(on_keys)(KEYS)), want)


def test_keys_under_vmap_and_scan():
    out = mjax.vmap(lambda k: jnp.broadcast_to(k, (3,)))(KEYS)
    np.testing.assert_array_equal(_data(out), np.broadcast_to(DATA[:, None], (4, 3, 2)))
    ys = mjax.lax.scan(lambda c, k: (c, jnp.stack([k, k])), 0, KEYS)[1]
    np.testing.assert_array_equal(_data(ys), np.stack([DATA, DATA], axis=1))


def test_selecting_everything_is_the_array_itself():
    x = jnp.arange(3.0)
    assert x[...] is x and x[()] is x and x[(Ellipsis,)] is x
    assert KEYS[...] is KEYS and KEYS[()] is KEYS
    assert mjax.jit(lambda x: x[...] + 1)(x).shape == (3,)


@pytest.mark.parametrize("fn", [lambda k: k + k, lambda k: lax.add(k, k), jnp.sin, jnp.sum,
                                lambda k: lax.convert_element_type(k, np.uint32)])
def test_arithmetic_on_keys_is_a_type_error(fn):
    with pytest.raises(TypeError):
        fn(KEYS)


def test_at_updates_other_than_set_are_type_errors():
    with pytest.raises(TypeError, match="add"):
        KEYS.at[0].add(KEYS[1])
    with pytest.raises(TypeError):
        KEYS.at[0].set(np.uint32(3))
