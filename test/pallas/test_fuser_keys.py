"""Closed-over PRNG keys in fusions against JAX's: get_fusion_values gives the key itself
as a value (a key dtype, `jax.random.key_data` of it the key's data), not its uint32
data, whether the key is concrete, traced (a jit argument), an array of keys, or read
through a nested jit (jax.random.uniform's); a uint32 array used as data stays data (a
fusion reading only a key's key_data gets the data: mjax's key_data is no op); the fusion's function computes JAX's values from the key; an input fusion
that `fuse` hands a fusible holds the key as JAX's does. (mjax's trace takes a key as
its data: the fuser makes a constant only random_wrap reads a key again.)"""
import numpy as np
import pytest

import jax  # noqa: F401  (the oracle; fuser_programs imports it per case)
from fuser_programs import namespace

DATA = np.arange(4 * 64, dtype=np.uint32).reshape(4, 64)


def _fusion(ns, name, key, keys):
    jax, jnp = ns.jax, ns.jnp
    return {
        "bits": lambda: jax.random.bits(key, (8, 128)),
        "uniform": lambda: jax.random.uniform(key, (8, 128), jnp.float32),
        "key_data": lambda: jax.random.key_data(key) * 3,
        "split_keys": lambda: jax.vmap(lambda k: jax.random.bits(k, (4,)))(keys),
        "key_and_data": lambda: jax.random.bits(jax.random.fold_in(key, 1), (4, 64))
        ^ jnp.asarray(DATA),
    }[name]


def _describe(ns, v, data=True):
    jax = ns.jax
    if jax.dtypes.issubdtype(v.dtype, jax.dtypes.prng_key):
        return ("key", tuple(v.shape), str(v.dtype),
                np.asarray(jax.random.key_data(v)).tolist() if data else None)
    return ("array", tuple(v.shape), str(v.dtype))


def _values(lib, name, traced):
    ns = namespace(lib)
    jax = ns.jax
    seen = []

    def go(key, keys):
        fn, vals, sps = ns.fuser.get_fusion_values(_fusion(ns, name, key, keys))
        seen.append(([_describe(ns, v, not traced) for v in vals], len(sps)))
        return fn(vals)
    key = jax.random.key(7)
    keys = jax.random.split(jax.random.key(3), 2)
    out = (jax.jit(go) if traced else go)(key, keys)
    return seen, [np.asarray(o) for o in jax.tree.leaves(out)]


NAMES = ["bits", "uniform", "key_data", "split_keys", "key_and_data"]


@pytest.mark.parametrize("traced", [False, True])
@pytest.mark.parametrize("name", NAMES)
def test_closed_over_key_is_a_key_value(name, traced):
    (got_seen, got), (want_seen, want) = (_values("mjax", name, traced),
                                          _values("jax", name, traced))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    if name == "key_data":
        np.testing.assert_array_equal(got[0], np.array([0, 7], np.uint32) * 3)
        # (a known difference: mjax's key_data of a key is its data, with no op for the
        # fuser to see, so the value is the data; JAX's is the key, random_unwrap in
        # the fusion)
        assert want_seen[0][0][0][0] == "key" and got_seen[0][0][0][:3] == (
            "array", (2,), "uint32")
        return
    assert got_seen == want_seen
    assert any(d[0] == "key" for d in got_seen[0][0])


def _pulled_space(lib):
    ns = namespace(lib)
    jax, pl, fuser = ns.jax, ns.pl, ns.fuser
    key = jax.random.key(7)
    fn, vals, _ = fuser.get_fusion_values(lambda: jax.random.bits(key, (16, 256)))
    kfn, (specs,), _ = fuser.pull_block_spec(
        fn, pl.BlockSpec((8, 128), lambda i, j: (i, j)), grid_len=2)(vals)
    return ([(s.block_shape, s.memory_space.name) for s in specs],
            [np.asarray(kfn((i, j), (), vals)) for i in range(2) for j in range(2)])


def test_closed_over_key_block_spec_is_in_key_space():
    (got_specs, got), (want_specs, want) = _pulled_space("mjax"), _pulled_space("jax")
    assert got_specs == want_specs == [(None, "KEY")]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def _fused(lib):
    ns = namespace(lib)
    jax, jnp, fuser = ns.jax, ns.jnp, ns.fuser
    seen = []

    @fuser.fusible
    def f(x_fn, z_fn):
        fn, vals, sps = fuser.get_fusion_values(x_fn)
        seen.append([_describe(ns, v, False) for v in vals])
        return fn(vals) * 2

    @jax.jit
    def run(x, key):
        return fuser.fuse(lambda x: f(x + jax.random.uniform(key, x.shape)))(x)
    x = np.arange(8 * 128, dtype=np.float32).reshape(8, 128)
    key = jax.random.key(5)
    out = np.asarray(run(x, key))
    return [d[:3] for d in seen[-1]], out, np.asarray(
        (x + jax.random.uniform(key, x.shape)) * 2)


def test_input_fusion_closing_over_a_key_matches_jax():
    (got_seen, got, got_np), (want_seen, want, _) = _fused("mjax"), _fused("jax")
    assert got_seen == want_seen and ("key", (), "key<fry>") in got_seen
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got, got_np, rtol=1e-6)
