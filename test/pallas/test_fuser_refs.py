"""pull_block_spec of functions closing over Refs (the ref get/swap rules) against JAX's
and NumPy: the kernel function reads, or swaps, the block of the whole Ref at the
output's block indices (an integer-indexed read, ref[3], at its index; JAX's
fuser_block_spec_test get/swap cases). Slicing reads and partial swaps are a
NotImplementedError in both; a write whose old value is unused has no block (an
AttributeError in both; mjax's is also a NotImplementedError)."""
import os

import numpy as np
import pytest

import jax  # noqa: F401  (the oracle; fuser_programs imports it per case)
from fuser_programs import namespace

ON_TPU = os.environ.get("MJAX_TEST_TPU", "") not in ("", "0")

X = np.arange(64 * 256, dtype=np.float32).reshape(64, 256)
Y = np.random.RandomState(0).randn(64, 256).astype(np.float32)
POINTS = [(0, 0), (1, 1), (3, 0)]


def _blk(a, p):
    return a[16 * p[0]:16 * p[0] + 16, 128 * p[1]:128 * p[1] + 128]


def _run(lib, name):
    ns = namespace(lib)
    jax, jnp, pl, fuser = ns.jax, ns.jnp, ns.pl, ns.fuser
    t = jax.ShapeDtypeStruct((64, 256), jnp.float32)
    spec = pl.BlockSpec((16, 128), lambda i, j: (i, j))
    shapes = []

    @jax.jit
    def go(x, y):
        r = jax.new_ref(x)
        if name == "read":
            f = lambda v: r[...] * 2 + v
        elif name == "swap":
            f = lambda v: jax.ref.swap(r, ..., jnp.tanh(v)) + 1
        elif name == "read_partial":
            f = lambda v: r[16:32] + v[:16]
        elif name == "swap_partial":      # (JAX's pull takes it; its kernel side not)
            f = lambda v: jax.ref.swap(r, (slice(0, 64), slice(0, 128)), v[:, :128]) + 1
        elif name == "swap_int":
            f = lambda v: jax.ref.swap(r, (3,), v[0]) + 1
        else:       # "write_unused"
            def f(v):
                r[...] = v * 2
                return v + 1
        kfn, (vspec,), _ = fuser.pull_block_spec(f, spec, grid_len=2)(t)
        outs = [kfn(p, (), _blk(y, p)) for p in POINTS]
        shapes.append(tuple(vspec.block_shape))
        return [tuple(vspec.index_map(*p)) for p in POINTS], outs, jax.ref.freeze(r)
    idxs, outs, ref = go(X, Y)
    return shapes, [tuple(int(i) for i in ix) for ix in idxs], \
        [np.asarray(o) for o in outs], np.asarray(ref)


@pytest.mark.parametrize("name", ["read", "swap"])
def test_ref_blocks_match_jax(name):
    got, want = _run("mjax", name), _run("jax", name)
    assert got[:2] == want[:2]
    for g, w in zip(got[2], want[2]):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(got[3], want[3])
    new = X.copy()
    for p, g in zip(POINTS, got[2]):
        if name == "read":
            np.testing.assert_allclose(g, _blk(X, p) * 2 + _blk(Y, p))
        else:      # (the old block, then the block written)
            np.testing.assert_allclose(g, _blk(X, p) + 1)
            _blk(new, p)[...] = np.tanh(_blk(Y, p))
    # The TPU's tanh is JAX's there (equal above) but not NumPy's: ~8e-5 apart.
    np.testing.assert_allclose(got[3], new, rtol=2e-4 if ON_TPU else 1e-6)


@pytest.mark.parametrize("lib", ["jax", "mjax"])
def test_partial_ref_read_is_not_supported(lib):
    with pytest.raises(NotImplementedError, match="get not supported yet"):
        _run(lib, "read_partial")


@pytest.mark.parametrize("lib", ["jax", "mjax"])
def test_partial_ref_swap_is_not_supported(lib):
    with pytest.raises(NotImplementedError, match="swap not supported yet"):
        _run(lib, "swap_partial")


@pytest.mark.parametrize("lib", ["jax", "mjax"])
def test_integer_indexed_ref_swap_is_jax_error(lib):
    # (JAX's swap rule gives its index operand no transform: a ValueError; mjax's is
    # also the NotImplementedError of the kernel side)
    with pytest.raises(ValueError):
        _run(lib, "swap_int")
    if lib == "mjax":
        with pytest.raises(NotImplementedError, match="swap not supported yet"):
            _run(lib, "swap_int")


def test_write_with_unused_old_value():
    # (JAX's AttributeError; mjax's error is also a NotImplementedError saying why)
    with pytest.raises(AttributeError):
        _run("jax", "write_unused")
    with pytest.raises(AttributeError, match="old value is unused"):
        _run("mjax", "write_unused")
    with pytest.raises(NotImplementedError):
        _run("mjax", "write_unused")


# ---- JAX's fuser_block_spec_test get/swap cases (under jit with new_ref rather than
# pl.run_state), the expected blocks as JAX's test states them ------------------------
V3 = np.arange(4 * 512 * 1024, dtype=np.int32).reshape(4, 512, 1024) * 2


def _jax_case(lib, name):
    ns = namespace(lib)
    jax, jnp, pl, fuser = ns.jax, ns.jnp, ns.pl, ns.fuser
    h = fuser.make_scalar_prefetch_handler()
    spec = pl.BlockSpec((256, 512), lambda i, j, k: (i, k))

    @jax.jit
    def go(v, x):
        ref = jax.new_ref(v)
        if name == "basic_get":
            kfn, (), _ = fuser.pull_block_spec(lambda: ref[...], spec, grid_len=3,
                                               scalar_prefetch_handler=h)()
            return kfn((0, 1, 1), ()), jax.ref.freeze(ref)
        if name == "get_squeezed_block_spec":
            s = pl.BlockSpec((pl.Squeezed(), 256, 512), lambda i, j, k: (j, i, k))
            kfn, (), _ = fuser.pull_block_spec(lambda: ref[...], s, grid_len=3,
                                               scalar_prefetch_handler=h)()
            return kfn((0, 3, 1), ()), jax.ref.freeze(ref)
        if name == "get_squeezed_indexer":
            kfn, (), _ = fuser.pull_block_spec(lambda: ref[3], spec, grid_len=3,
                                               scalar_prefetch_handler=h)()
            return kfn((0, 2, 1), ()), jax.ref.freeze(ref)

        def f(values, x):     # ("basic_swap": the Ref is one of the values)
            r, = values
            return jax.ref.swap(r, ..., x)
        t = jax.ShapeDtypeStruct((512, 1024), jnp.int32)
        kfn, (vspecs, xspec), _ = fuser.pull_block_spec(
            f, spec, grid_len=3, scalar_prefetch_handler=h)((ref,), t)
        assert len(vspecs) == 1
        assert [tuple(int(i) for i in xspec.index_map(*p)) for p in
                [(0, 1, 2), (3, 2, 1)]] == [(0, 2), (3, 1)]
        return kfn((0, 1, 1), (), (ref,), x), jax.ref.freeze(ref)
    v = V3[0] if name in ("basic_get", "basic_swap") else V3
    return [np.asarray(o) for o in go(v, np.full((256, 512), -1, np.int32))]


@pytest.mark.parametrize("name", ["basic_get", "get_squeezed_block_spec",
                                  "get_squeezed_indexer", "basic_swap"])
def test_jax_get_swap_cases(name):
    got, want = _jax_case("mjax", name), _jax_case("jax", name)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    block = {"get_squeezed_block_spec": V3[3], "get_squeezed_indexer": V3[3]}.get(
        name, V3[0])[:256, 512:]
    np.testing.assert_array_equal(got[0], block)
    if name == "basic_swap":
        assert (got[1][:256, 512:] == -1).all() and (got[1][256:] == V3[0][256:]).all()
