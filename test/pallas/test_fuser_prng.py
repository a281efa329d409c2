"""The fuser's PRNG rules against JAX's: a fusion drawing random bits (or uniforms) from a
key pulls to a key that is not blocked, and the kernel function's block is JAX's bit for
bit (the block's indices folded into the key), and JAX's fuser_block_spec_test random
cases. A closed-over key is a value that is the key (a key dtype, as JAX's, though
mjax's trace takes its uint32 data) with an unblocked BlockSpec in the KEY memory space;
so is a key argument's BlockSpec."""
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
    # (the value is the key itself, as JAX's: a key, not its uint32 data)
    assert jax.dtypes.issubdtype(values[0].dtype, jax.dtypes.prng_key)
    assert values[0].shape == () and str(values[0].dtype) == str(key.dtype)
    np.testing.assert_array_equal(np.asarray(jax.random.key_data(values[0])),
                                  np.asarray(jax.random.key_data(key)))
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
    assert wspace.name == gspace.name == "KEY"
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape == (16, 128)
        np.testing.assert_array_equal(g, w)
    assert not np.array_equal(got[0], got[1])       # (blocks differ)


# ---- JAX's fuser_block_spec_test random cases: each block is uniform() of the key with
# the block's indices folded in, as JAX's test's `gen` computes it ---------------------
def _jax_random_case(lib, name):
    ns = namespace(lib)
    jax, jnp, pl, fuser = ns.jax, ns.jnp, ns.pl, ns.fuser
    h = fuser.make_scalar_prefetch_handler()
    key = jax.random.key(0, impl="threefry2x32")
    msg = jnp.array(42, dtype=jnp.int32)
    spec = pl.BlockSpec((128, 256), lambda i, j: (i, j))
    pts = [(i, j) for i in range(4) for j in range(2)]

    def gen(k, idx, shape=(128, 256)):
        for i in idx:
            k = jax.random.fold_in(k, i)
        return np.asarray(jax.random.uniform(k, shape, dtype=jnp.float32))
    if name == "random_noise":        # (the key an argument)
        f2, vals, sps = fuser.get_fusion_values(
            lambda k: jax.random.uniform(k, (512, 512), dtype=jnp.float32), key)
        kfn, (vspecs, kspec), _ = fuser.pull_block_spec(
            f2, spec, grid_len=2, scalar_prefetch_handler=h)(vals, key)
        assert (len(vals), len(sps), len(vspecs)) == (0, 0, 0)
        assert kspec.block_shape is None and kspec.memory_space.name == "KEY"
        outs = [np.asarray(kfn(p, sps, (), key)) for p in pts]
        return outs, [gen(key, p) for p in pts]
    if name == "random_fold_in":      # (the key closed over, the message an argument)
        t = jax.ShapeDtypeStruct((), jnp.int32)
        f2, vals, sps = fuser.get_fusion_values(
            lambda m: jax.random.uniform(jax.random.fold_in(key, m), (512, 512),
                                         dtype=jnp.float32), t)
        kfn, (vspecs, mspec), _ = fuser.pull_block_spec(
            f2, spec, grid_len=2, scalar_prefetch_handler=h)(vals, t)
        assert len(vspecs) == 1 and vspecs[0].block_shape is None
        assert mspec is pl.no_block_spec
        outs = [np.asarray(kfn(p, sps, tuple(vals), msg)) for p in pts]
        return outs, [gen(jax.random.fold_in(key, msg), p) for p in pts]

    @jax.jit                          # ("get_key_ref": the key read from a Ref)
    def outer(y):
        key_ref = jax.new_ref(key)
        kfn, (), _ = fuser.pull_block_spec(
            lambda: jax.random.uniform(key_ref[...], (512, 512), dtype=jnp.float32),
            pl.BlockSpec((512, 256), lambda i: (0, i)), grid_len=1,
            scalar_prefetch_handler=h)()
        return [kfn((i,), ()) for i in range(2)]
    return [np.asarray(o) for o in outer(0)], [gen(key, (0, i), (512, 256))
                                               for i in range(2)]


@pytest.mark.parametrize("name", ["random_noise", "random_fold_in", "get_key_ref"])
def test_jax_random_cases(name):
    got, got_gen = _jax_random_case("mjax", name)
    want, want_gen = _jax_random_case("jax", name)
    for g, w, gg, wg in zip(got, want, got_gen, want_gen):
        np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(gg, wg)
        np.testing.assert_array_equal(g, gg)
