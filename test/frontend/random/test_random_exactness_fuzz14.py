"""Differences from jax.random found by a differential fuzz (fuzz 14), each checked
bitwise against real jax: fold_in's message range, rbg keys under
jax_threefry_partitionable=False, unsafe_rbg keys split under vmap."""
import numpy as np
import pytest

import jax
import mjax


def _bits(x):
    return np.asarray(x).tobytes()


def _same_keys(a, b):
    ka, kb = np.asarray(jax.random.key_data(a)), np.asarray(mjax.random.key_data(b))
    assert ka.dtype == kb.dtype and ka.shape == kb.shape
    np.testing.assert_array_equal(ka, kb)


@pytest.mark.parametrize("data", [2**31 + 5, 2**32 - 1, np.uint32(3_000_000_000), 2.7])
@pytest.mark.parametrize("new", [True, False])
def test_fold_in_uint32_range(data, new):
    # JAX converts the message with jnp.asarray(data, dtype='uint32'): ints up to 2**32 - 1.
    make = "key" if new else "PRNGKey"
    _same_keys(jax.random.fold_in(getattr(jax.random, make)(1), data),
               mjax.random.fold_in(getattr(mjax.random, make)(1), data))


@pytest.mark.parametrize("data", [-3, 2**32])
def test_fold_in_out_of_range_raises(data):
    with pytest.raises(OverflowError):
        jax.random.fold_in(jax.random.key(1), data)
    with pytest.raises(OverflowError):
        mjax.random.fold_in(mjax.random.key(1), data)


def _both_set(name, value):
    """Sets config `name` in both libraries for a test, then back to what it was."""
    before = getattr(jax.config, name), getattr(mjax.config, name)
    jax.config.update(name, value)
    mjax.config.update(name, value)
    yield
    jax.config.update(name, before[0])
    mjax.config.update(name, before[1])


@pytest.fixture
def not_partitionable():
    yield from _both_set("jax_threefry_partitionable", False)


@pytest.mark.parametrize("impl", ["rbg", "unsafe_rbg"])
def test_rbg_keys_not_partitionable(impl, not_partitionable):
    # rbg splits each half key with threefry's original split; its bits and unsafe_rbg's
    # ops ignore the flag.
    for lib in (jax, mjax):
        lib.k = lib.random.key(0, impl=impl)
    _same_keys(jax.random.split(jax.k, (2, 3)), mjax.random.split(mjax.k, (2, 3)))
    _same_keys(jax.random.fold_in(jax.k, 3), mjax.random.fold_in(mjax.k, 3))
    a = jax.random.normal(jax.k, (5,))
    b = mjax.random.normal(mjax.k, (5,))
    assert _bits(a) == _bits(b)


@pytest.mark.parametrize("shape", [(3,), (2, 2), ()])
def test_unsafe_rbg_split_under_vmap(shape):
    # JAX's rng_bit_generator batching rule draws every key's rows from the first key.
    def f(L):
        keys = L.random.split(L.random.key(0, impl="unsafe_rbg"), 2)
        return L.vmap(lambda k: L.random.split(k, shape))(keys)
    _same_keys(f(jax), f(mjax))


def test_unsafe_rbg_split_nested_vmap():
    def f(L):
        keys = L.random.split(L.random.key(4, impl="unsafe_rbg"), (2, 3))
        return L.vmap(L.vmap(lambda k: L.random.split(k)))(keys)
    _same_keys(f(jax), f(mjax))


@pytest.fixture
def x64():
    yield from _both_set("jax_enable_x64", True)


@pytest.mark.parametrize("sampler", [
    lambda L: L.random.rademacher(L.random.key(11), (8,)),
    lambda L: L.random.rademacher(L.random.key(11), (8,), dtype="float32"),
    lambda L: L.random.generalized_normal(L.random.key(11), 1.5, (5,)),
    lambda L: L.random.ball(L.random.key(11), 3),
    lambda L: L.random.double_sided_maxwell(L.random.key(11), 0., 1., (4,), dtype="float64"),
], ids=["rademacher", "rademacher_f32", "generalized_normal", "ball", "dsmaxwell"])
def test_rademacher_under_x64(sampler, x64):
    # JAX's rademacher is bernoulli(p=0.5): a Python float, so float64 uniforms under x64
    a, b = sampler(jax), sampler(mjax)
    assert a.dtype == b.dtype
    assert _bits(a) == _bits(b)
