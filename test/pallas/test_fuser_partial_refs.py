"""Fusions reading and writing part of a Ref (get_stateful_input_fusion_values and
get_stateful_output_fusion_values) against JAX's and NumPy: the fusion's function is
the Refs' contents discharged as JAX's state discharge does it (a slice, a dynamic_slice
then squeeze for an integer index or a traced start, a dynamic_update_slice for a
partial write), so pull_block_spec blocks partial reads as JAX's rules do and refuses a
partial write (no dynamic_update_slice rule, JAX's NotImplementedError); `fuse` hands an
output fusion writing part of a Ref to a fusible, and JAX's fusible matmul runs with
input fusions reading part of a Ref."""
import os

import numpy as np
import pytest

import jax  # noqa: F401  (the oracle; fuser_programs imports it per case)
from fuser_programs import fusible_matmul, namespace, ref_writer

ON_TPU = os.environ.get("MJAX_TEST_TPU", "") not in ("", "0")

B = np.arange(16 * 256, dtype=np.float32).reshape(16, 256)
V = B[::-1] * 0.5 + 1
I = 5

READS = {       # (the fusion, NumPy's value)
    "slice": (lambda ns, r, i: r[8:16] * 2, B[8:16] * 2),
    "int": (lambda ns, r, i: r[3] * 2, B[3] * 2),
    "int_and_slice": (lambda ns, r, i: r[3, 128:256], B[3, 128:]),
    "traced_start": (lambda ns, r, i: r[ns.pl.ds(i, 8)] + 1, B[I:I + 8] + 1),
    "negative": (lambda ns, r, i: r[-2] * 2, B[-2] * 2),
}


def _write(name, r, v, i, ns):
    if name == "slice":
        r[0:8] = v[8:16]
    elif name == "int":
        r[3] = v[0]
    elif name == "add":
        r[2:4] += v[0:2]
    elif name == "traced_start":
        r[ns.pl.ds(i, 2)] = v[0:2] * 3
    elif name == "old_value":
        return ns.jax.ref.swap(r, (slice(8, 16),), v[0:8]) + 1
    return v * 2


def _expected_write(name):
    r, out = B.copy(), V * 2
    if name == "slice":
        r[0:8] = V[8:16]
    elif name == "int":
        r[3] = V[0]
    elif name == "add":
        r[2:4] += V[0:2]
    elif name == "traced_start":
        r[I:I + 2] = V[0:2] * 3
    else:
        out = B[8:16] + 1
        r[8:16] = V[0:8]
    return out, r


def _values(lib, name, write=False):
    ns = namespace(lib)
    jax, fuser = ns.jax, ns.fuser
    kinds = []

    @jax.jit
    def go(b, v, i):
        r = jax.new_ref(b)
        if not write:
            fn, vals, sps = fuser.get_stateful_input_fusion_values(
                lambda: READS[name][0](ns, r, i))
            kinds.append(([isinstance(x, jax.ref.Ref) for x in vals], len(sps), None))
            return fn(tuple(x[...] if isinstance(x, jax.ref.Ref) else x for x in vals))
        t = jax.ShapeDtypeStruct(b.shape, b.dtype)
        fn, vals, sps, aliases = fuser.get_stateful_output_fusion_values(
            lambda x: _write(name, r, x, i, ns), t)
        # (the value each alias names: a Ref, in either's order of the values)
        kinds.append(([isinstance(x, jax.ref.Ref) for x in vals], len(sps),
                      [(o, isinstance(vals[k], jax.ref.Ref)) for o, k in aliases.items()]))
        return fn(tuple(x[...] if isinstance(x, jax.ref.Ref) else x for x in vals), v)
    out = go(B, V, I)
    return [np.asarray(o) for o in jax.tree.leaves(out)], kinds


@pytest.mark.parametrize("name", list(READS))
def test_partial_read_values_match_jax(name):
    (got, got_kinds), (want, want_kinds) = _values("mjax", name), _values("jax", name)
    assert sorted(got_kinds[0][0]) == sorted(want_kinds[0][0])
    assert got_kinds[0][1:] == want_kinds[0][1:]
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[0], READS[name][1])


@pytest.mark.parametrize("name", ["slice", "int", "add", "traced_start", "old_value"])
def test_partial_write_values_match_jax(name):
    (got, got_kinds), (want, want_kinds) = (_values("mjax", name, write=True),
                                            _values("jax", name, write=True))
    assert sorted(got_kinds[0][0]) == sorted(want_kinds[0][0])
    assert got_kinds[0][1:] == want_kinds[0][1:] and got_kinds[0][2] == [(1, True)]
    for g, w, e in zip(got, want, _expected_write(name)):
        np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(g, e)


# ---- pull_block_spec of the discharged fusions ------------------------------------------
PULLS = {       # (the read, its output BlockSpec's block shape and index map)
    "slice": ((8, 128), lambda j, *_: (0, j)),
    "int": ((128,), lambda j, *_: (j,)),
    "int_and_slice": ((128,), lambda j, *_: (0,)),
    "traced_start": ((8, 128), lambda j, *_: (0, j)),
    "whole": ((8, 128), lambda j, *_: (1, j)),
}


def _pull(lib, name, start=8):
    ns = namespace(lib)
    jax, jnp, pl, fuser = ns.jax, ns.jnp, ns.pl, ns.fuser
    h = fuser.make_scalar_prefetch_handler(0)
    fusion = (lambda ns, r, i: r[...] * 2) if name == "whole" else READS[name][0]

    @jax.jit
    def go(b, i):
        r = jax.new_ref(b)
        fn, vals, sps = fuser.get_stateful_input_fusion_values(lambda: fusion(ns, r, i))
        types = tuple(jax.typeof(x).inner_aval if isinstance(x, jax.ref.Ref) else
                      jax.typeof(x) for x in vals)
        kfn, (specs,), _ = fuser.pull_block_spec(fn, pl.BlockSpec(*PULLS[name]),
                                                 grid_len=1,
                                                 scalar_prefetch_handler=h)(types)
        sp = tuple(jnp.asarray(s)[None] for s in sps)
        shapes.extend(tuple(s.block_shape) for s in specs)
        outs = []
        for j in range(2):
            idx, blocks = [], []
            for x, s in zip(vals, specs):     # (the block pallas_call would pass)
                x = x[...] if isinstance(x, jax.ref.Ref) else x
                ix = s.index_map(j, sp)
                sizes = [1 if d is None else d for d in s.block_shape]
                block = jax.lax.dynamic_slice(x, [k * n for k, n in zip(ix, sizes)], sizes)
                blocks.append(block.reshape([d for d in s.block_shape if d is not None]))
                idx.append(ix)
            outs.append((idx, kfn((j,), (sp,), tuple(blocks))))
        return outs
    shapes = []
    outs = go(B, start)
    return shapes, [
        ([tuple(int(k) for k in ix) for ix in idx], np.asarray(o)) for idx, o in outs]


@pytest.mark.parametrize("name", list(PULLS))
def test_pull_block_spec_of_a_partial_read_matches_jax(name):
    (got_shapes, got), (want_shapes, want) = _pull("mjax", name), _pull("jax", name)
    assert got_shapes == want_shapes
    for j, ((gi, g), (wi, w)) in enumerate(zip(got, want)):
        assert gi == wi
        np.testing.assert_array_equal(g, w)
        whole = {"whole": B * 2, "traced_start": B[8:16] + 1}.get(name, READS.get(
            name, (None, None))[1])
        shape, index_map = PULLS[name]
        block = whole[tuple(slice(k * n, k * n + n) for k, n in zip(index_map(j), shape))]
        np.testing.assert_array_equal(g, block)


@pytest.mark.parametrize("lib", ["jax", "mjax"])
def test_pull_of_an_unaligned_partial_read_is_jax_error(lib):
    # (a slice not on the blocks: JAX's slice rule asserts it)
    ns = namespace(lib)
    READS["unaligned"] = (lambda ns, r, i: r[2:10] * 2, None)
    PULLS["unaligned"] = PULLS["slice"]
    try:
        with pytest.raises(AssertionError):
            _pull(lib, "unaligned")
    finally:
        del READS["unaligned"], PULLS["unaligned"]
    del ns


@pytest.mark.parametrize("lib", ["jax", "mjax"])
@pytest.mark.parametrize("name", ["slice", "int"])
def test_pull_of_a_partial_write_is_jax_error(lib, name):
    ns = namespace(lib)
    jax, pl, fuser = ns.jax, ns.pl, ns.fuser

    @jax.jit
    def go(b):
        r = jax.new_ref(b)
        t = jax.ShapeDtypeStruct(b.shape, b.dtype)
        fn, vals, _, _ = fuser.get_stateful_output_fusion_values(
            lambda x: _write(name, r, x, 0, ns), t)
        types = [jax.typeof(x).inner_aval for x in vals]
        spec = pl.BlockSpec((8, 128), lambda j, *_: (0, j))
        fuser.pull_block_spec(fn, (spec, (spec,)), grid_len=1)(types, t)
        return b
    with pytest.raises(NotImplementedError, match="dynamic_update_slice"):
        go(B)


# ---- JAX's fusible matmul with input fusions reading part of a Ref ----------------------
RNG = np.random.RandomState(1)
X = RNG.randn(16, 256).astype(np.float32)
Y = RNG.randn(256, 256).astype(np.float32)
A = RNG.randn(32, 256).astype(np.float32)
C = RNG.randn(4, 256).astype(np.float32)


def _matmul(lib):
    ns = namespace(lib)
    jax, fuser = ns.jax, ns.fuser

    @jax.jit
    def run(x, y, a, c):
        a_ref, c_ref = jax.new_ref(a), jax.new_ref(c)
        return fuser.fuse(lambda x, y: fusible_matmul(
            ns, x + a_ref[8:24], y * c_ref[2], stateful=True))(x, y)
    return np.asarray(run(X, Y, A, C))


def test_matmul_with_partial_ref_reads_matches_jax():
    got, want = _matmul("mjax"), _matmul("jax")
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-5)
    np.testing.assert_allclose(got, (X + A[8:24]) @ (Y * C[2]), rtol=1e-4, atol=1e-3)


# ---- fuse: an output fusion writing (and reading) part of a Ref -------------------------
def _fused_writes(lib, overwrite):
    ns = namespace(lib)
    jax, fuser = ns.jax, ns.fuser
    seen = []
    f = ref_writer(ns, seen)

    @jax.jit
    def run(x, b):
        b_ref = jax.new_ref(b)

        def prog(x):
            z = f(x)
            b_ref[0:8] = z[8:16] + b_ref[8:16]
            b_ref[3] = z[0] * b_ref[5]
            if overwrite:          # (the written rows replaced by values not from z)
                b_ref[0:8] = x[0:8]
            return z - 1
        return fuser.fuse(prog)(x), jax.ref.freeze(b_ref)
    x = V[:16]
    return [np.asarray(v) for v in run(x, B)], seen


def test_fused_output_fusion_writing_part_of_a_ref_matches_jax():
    (got, got_seen), (want, want_seen) = (_fused_writes("mjax", False),
                                          _fused_writes("jax", False))
    assert got_seen == want_seen and got_seen[-1][3] == {1: 0}
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    z = V[:16] * 2
    b = B.copy()
    b[0:8] = z[8:16] + B[8:16]
    b[3] = z[0] * b[5]
    np.testing.assert_allclose(got[0], z - 1)
    np.testing.assert_allclose(got[1], b)


@pytest.mark.parametrize("lib", ["jax", "mjax"])
def test_partial_overwrite_is_no_error(lib):
    # (a partial write keeps the rest of the old contents, so the Ref's contents still
    # depend on the fusible as JAX's query on the discharged jaxpr sees it, though these
    # rows cover all z wrote: no error; the final contents are NumPy's)
    got, _ = _fused_writes(lib, True)
    b = B.copy()
    b[0:8] = V[8:16] * 2 + B[8:16]
    b[3] = V[0] * 2 * b[5]
    b[0:8] = V[0:8]
    np.testing.assert_allclose(got[1], b)


# ---- a partial read beside calls (jax.nn.relu's custom_jvp, a nested jit) and a key ----
def _through_calls(lib):
    ns = namespace(lib)
    jax, jnp, pl, fuser = ns.jax, ns.jnp, ns.pl, ns.fuser
    key = jax.random.key(3)
    kinds = []

    @jax.jit
    def go(b):
        r = jax.new_ref(b)
        inner = jax.jit(lambda v: jnp.tanh(v) * 2)

        def f():
            x = r[8:16]
            return jax.nn.relu(x) + inner(x) + jax.random.uniform(key, x.shape)
        fn, vals, _ = fuser.get_stateful_input_fusion_values(f)
        types = tuple(jax.typeof(v).inner_aval if isinstance(v, jax.ref.Ref) else
                      jax.typeof(v) for v in vals)
        kinds.extend(str(t) for t in types)
        kfn, (specs,), _ = fuser.pull_block_spec(
            fn, pl.BlockSpec((8, 128), lambda j: (0, j)), grid_len=1)(types)
        blocks = tuple(v[...][8:16, 128:] if isinstance(v, jax.ref.Ref) else v
                       for v in vals)
        whole = fn(tuple(v[...] if isinstance(v, jax.ref.Ref) else v for v in vals))
        return whole, kfn((1,), (), blocks), jax.random.uniform(key, (8, 256))
    return kinds, [np.asarray(o) for o in go((B - 2000) / 100)]


def test_partial_read_through_calls_and_a_key_matches_jax():
    (got_kinds, got), (want_kinds, want) = _through_calls("mjax"), _through_calls("jax")
    assert got_kinds == want_kinds == ["float32[16,256]", "key<fry>[]"]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    x = ((B - 2000) / 100)[8:16]
    expected = np.maximum(x, 0) + np.tanh(x) * 2 + got[2]
    # The TPU's tanh is JAX's there (equal above) but not NumPy's: ~3e-5 apart.
    tol = 2e-4 if ON_TPU else 1e-6
    np.testing.assert_allclose(got[0], expected, rtol=tol, atol=tol)
    # (the kernel's block draws its own uniforms, the block's indices folded into the
    # key: in [0, 1) over the rest)
    u = got[1] - (expected - got[2])[:, 128:]
    assert (u > -1e-5).all() and (u < 1 + 1e-5).all() and u.std() > 0.1
