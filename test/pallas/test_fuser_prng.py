"""The fuser's PRNG rules against JAX's: a fusion drawing random bits (or uniforms) from a
key pulls to a key that is not blocked, and the kernel function's block is JAX's bit for
bit (the block's indices folded into the key). mjax's keys cross traces as their uint32
data, so the value the fusion reads is the key's data (JAX: the key, in the KEY memory
space); NumPy checks the data is the key's."""
import numpy as np
import pytest

import jax  # noqa: F401  (the oracle; fuser_programs imports it per case)
from fuser_programs import namespace

POINTS = [(0, 0, 0), (3, 1, 2), (1, 0, 1)]


def _fusion(ns, name, key):
    jax, jnp = ns.jax, ns.jnp
    if name == "bits":
        return lambda: jax.random.bits(key, (64, 256))
    if name == "fold_in_bits":
        return lambda: jax.random.bits(jax.random.fold_in(key, 3), (64, 256))
    if name == "uniform":
        return lambda: jax.random.uniform(key, (64, 256), jnp.float32)
    if name == "uniform_plus_x":       # (a blocked argument next to the key)
        return lambda x: x + jax.random.uniform(jax.random.fold_in(key, 5), (64, 256))
    if name == "bits16":
        return lambda: jax.random.bits(key, (64, 256), jnp.uint16)
    raise KeyError(name)


def _run(lib, name):
    ns = namespace(lib)
    jax, jnp, pl, fuser = ns.jax, ns.jnp, ns.pl, ns.fuser
    key = jax.random.key(11)
    x = np.arange(64 * 256, dtype=np.float32).reshape(64, 256)
    args = (jax.ShapeDtypeStruct((64, 256), jnp.float32),) if name == "uniform_plus_x" \
        else ()
    f2, values, sps = fuser.get_fusion_values(_fusion(ns, name, key), *args)
    spec = pl.BlockSpec((16, 128), lambda i, j, k: (i, j))
    kfn, (vspecs, *aspecs), _ = fuser.pull_block_spec(f2, spec, grid_len=3)(values, *args)
    assert [s.block_shape for s in vspecs] == [None]
    data = np.asarray(jax.random.key_data(key))
    value = values[0] if lib == "mjax" else jax.random.key_data(values[0])
    np.testing.assert_array_equal(np.asarray(value), data)
    blocks = []
    for p in POINTS:
        a = () if not args else (x[16 * p[0]:16 * p[0] + 16, 128 * p[1]:128 * p[1] + 128],)
        blocks.append(np.asarray(kfn(p, (), tuple(values), *a)))
        for s in aspecs:
            assert tuple(s.block_shape) == (16, 128)
            assert tuple(int(i) for i in s.index_map(*p)) == p[:2]
    return vspecs[0].memory_space, blocks


@pytest.mark.parametrize("name", ["bits", "fold_in_bits", "uniform", "uniform_plus_x",
                                  "bits16"])
def test_random_blocks_match_jax(name):
    (gspace, got), (wspace, want) = _run("mjax", name), _run("jax", name)
    assert wspace.name == "KEY" and gspace is None
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape == (16, 128)
        np.testing.assert_array_equal(g, w)
    assert not np.array_equal(got[0], got[1])       # (blocks differ)
