"""Fusions closing over Refs (fuser.get_stateful_input_fusion_values and
get_stateful_output_fusion_values) against JAX's and NumPy: the fusible matmul of JAX's
tpu_fusible_matmul_with_stateful_fusions_test with read-only Refs (its pallas_call form,
interpreted), an output fusion writing Refs (their new values as extra outputs with
aliases), reads of a Ref after a write depending on the fusible, JAX's stateful matmul
cases (a Ref written back through input_output_aliases), and JAX's errors. Partial
reads and writes of Refs: test_fuser_partial_refs.py."""
import numpy as np
import pytest

import jax  # noqa: F401  (the oracle; fuser_programs imports it)
from fuser_programs import fusible_matmul, namespace, ref_writer

RNG = np.random.RandomState(0)
X = RNG.randn(16, 256).astype(np.float32)
Y = RNG.randn(256, 256).astype(np.float32)
A = RNG.randn(16, 256).astype(np.float32)
B = RNG.randn(16, 256).astype(np.float32)
C = RNG.randn(256, 256).astype(np.float32)


def _read_only_refs(lib):
    ns = namespace(lib)
    jax, jnp, fuser = ns.jax, ns.jnp, ns.fuser

    @jax.jit
    def run(x, y, a, b, c):
        a_ref, b_ref, c_ref = jax.new_ref(a), jax.new_ref(b), jax.new_ref(c)

        def matmul(x, y):
            z = fusible_matmul(ns, x + a_ref[...], y + c_ref[...] * 0.5, stateful=True)
            return jnp.maximum(z + b_ref[...], 0.0)
        return fuser.fuse(matmul)(x, y)
    return np.asarray(run(X, Y, A, B, C))


def test_matmul_with_read_only_refs():
    got, want = _read_only_refs("mjax"), _read_only_refs("jax")
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-5)
    np.testing.assert_allclose(got, np.maximum((X + A) @ (Y + C * 0.5) + B, 0),
                               rtol=1e-4, atol=1e-3)


def _values_of_ref_fusion(lib, stateful):
    ns = namespace(lib)
    jax, fuser = ns.jax, ns.fuser
    seen = []

    @jax.jit
    def run(a):
        r = jax.new_ref(a)
        get = (fuser.get_stateful_input_fusion_values if stateful
               else fuser.get_fusion_values)
        fn, values, sps = get(lambda: r[...] * 2)
        seen.append((len(values), [isinstance(v, jax.ref.Ref) for v in values], len(sps)))
        return fn(tuple(v[...] for v in values))
    return np.asarray(run(A)), seen


def test_stateful_input_fusion_values_match_jax():
    got, got_seen = _values_of_ref_fusion("mjax", True)
    want, want_seen = _values_of_ref_fusion("jax", True)
    assert got_seen == want_seen == [(1, [True], 0)]
    np.testing.assert_allclose(got, want)
    np.testing.assert_allclose(got, A * 2)


@pytest.mark.parametrize("lib", ["jax", "mjax"])
def test_get_fusion_values_of_a_ref_is_jax_error(lib):
    with pytest.raises(ValueError, match="Ref values are only supported"):
        _values_of_ref_fusion(lib, False)


def _output_fusion_writes(lib):
    ns = namespace(lib)
    jax, jnp, fuser = ns.jax, ns.jnp, ns.fuser
    seen = []
    f = ref_writer(ns, seen)

    @jax.jit
    def run(x, b, c):
        b_ref, c_ref = jax.new_ref(b), jax.new_ref(c)

        def prog(x):
            z = f(x)
            b_ref[...] = jnp.maximum(z + b_ref[...], 0.0)
            c_ref[...] += z * c_ref[...]
            return z - 1
        out = fuser.fuse(prog)(x)
        return out, jax.ref.freeze(b_ref), jax.ref.freeze(c_ref)
    return [np.asarray(v) for v in run(X, B, A)], seen


def test_output_fusion_writing_refs_matches_jax():
    got, got_seen = _output_fusion_writes("mjax")
    want, want_seen = _output_fusion_writes("jax")
    assert got_seen == want_seen
    assert got_seen[-1] == (2, [True, True], 0, {1: 0, 2: 1})
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6)
    np.testing.assert_allclose(got[0], X * 2 - 1, rtol=1e-6)
    np.testing.assert_allclose(got[1], np.maximum(X * 2 + B, 0), rtol=1e-6)
    np.testing.assert_allclose(got[2], A + X * 2 * A, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("lib", ["jax", "mjax"])
def test_write_not_depending_on_the_fusible_is_jax_error(lib):
    ns = namespace(lib)
    jax, fuser = ns.jax, ns.fuser
    f = ref_writer(ns, [])

    @jax.jit
    def run(x, b):
        b_ref = jax.new_ref(b)

        def prog(x):
            b_ref[...] = x * 2
            return f(x)
        return fuser.fuse(prog)(x), jax.ref.freeze(b_ref)
    with pytest.raises(ValueError, match="A write to a Ref in a fusion must depend on an "
                                         "output of the fusible"):
        run(X, B)


def _read_after_write(lib, second_ref):
    ns = namespace(lib)
    jax, fuser = ns.jax, ns.fuser
    seen = []
    f = ref_writer(ns, seen)

    @jax.jit
    def run(x, b, c):
        b_ref, c_ref = jax.new_ref(b), jax.new_ref(c)

        def prog(x):
            z = f(x)
            b_ref[...] = z + b_ref[...]
            if second_ref:        # (a Ref written from one the fusible wrote)
                c_ref[...] = b_ref[...] * c_ref[...]
            return b_ref[...] * 3
        return fuser.fuse(prog)(x), jax.ref.freeze(b_ref), jax.ref.freeze(c_ref)
    return [np.asarray(v) for v in run(X, B, A)], seen


@pytest.mark.parametrize("second_ref", [False, True])
def test_read_of_a_ref_after_a_fused_write_matches_jax(second_ref):
    # (the read depends on the fusible through the Ref's contents: the output fusion
    # computes it after the write)
    got, got_seen = _read_after_write("mjax", second_ref)
    want, want_seen = _read_after_write("jax", second_ref)
    assert got_seen == want_seen
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6)
    b = X * 2 + B
    np.testing.assert_allclose(got[0], b * 3, rtol=1e-6)
    np.testing.assert_allclose(got[1], b, rtol=1e-6)
    np.testing.assert_allclose(got[2], b * A if second_ref else A, rtol=1e-6)


@pytest.mark.parametrize("lib", ["jax", "mjax"])
def test_write_overwritten_independently_is_jax_error(lib):
    # (the Ref's final contents do not depend on the fusible)
    ns = namespace(lib)
    jax, fuser = ns.jax, ns.fuser
    f = ref_writer(ns, [])

    @jax.jit
    def run(x, b):
        b_ref = jax.new_ref(b)

        def prog(x):
            z = f(x)
            b_ref[...] = z
            b_ref[...] = x * 2
            return z + 1
        return fuser.fuse(prog)(x), jax.ref.freeze(b_ref)
    with pytest.raises(ValueError, match="A write to a Ref in a fusion must depend on an "
                                         "output of the fusible"):
        run(X, B)


@pytest.mark.parametrize("lib", ["jax", "mjax"])
def test_writes_with_several_output_fusions_is_jax_error(lib):
    ns = namespace(lib)
    jax, fuser = ns.jax, ns.fuser

    @fuser.fusible(output_fusion_prefix=(True, True))
    def f(x_fn, y_fn, z_fns):
        return x_fn(), y_fn()

    @jax.jit
    def run(x, b):
        b_ref = jax.new_ref(b)

        def prog(x, y):
            p, q = f(x, y)
            b_ref[...] = p
            return q
        return fuser.fuse(prog)(x, x), jax.ref.freeze(b_ref)
    with pytest.raises(ValueError, match="Multiple output fusions are not currently "
                                         "supported for fusions that write to Refs."):
        run(X, B)


@pytest.mark.parametrize("lib", ["jax", "mjax"])
def test_ref_argument_is_jax_error(lib):
    ns = namespace(lib)
    ref = ns.jax.new_ref(ns.jnp.asarray(B))
    with pytest.raises(NotImplementedError, match="Fused functions cannot take Refs as "
                                                  "arguments"):
        ns.fuser.fuse(lambda r: r[...])(ref)


# ---- JAX's tpu_fusible_matmul_with_stateful_fusions_test cases (smaller shapes) ----------
def _aliased_matmul(lib, case, fuse_all=True):
    ns = namespace(lib)
    jax, jnp, fuser = ns.jax, ns.jnp, ns.fuser

    @jax.jit
    def run(x, y, b):
        x_ref, b_ref = jax.new_ref(x), jax.new_ref(b)
        mm = lambda x, y: fusible_matmul(ns, x, y, stateful=True)
        if not fuse_all:
            mm = fuser.fuse(mm)

        def matmul(x, y):
            if case == "simple_aliased_ref":
                b_ref[...] = jnp.maximum(mm(x, y) + b_ref[...], 0.0)
            elif case == "unsupported_ref_access":
                x_ref[...] = mm(x_ref[...] + b_ref[...], y)
            else:      # "writes_not_depending_on_output"
                b_ref[...] = x * 2.0
                return mm(x, y)
        out = (fuser.fuse(matmul) if fuse_all else matmul)(x, y)
        return out, jax.ref.freeze(b_ref)
    return [np.asarray(v) for v in run(X, Y, A) if v is not None]


def test_matmul_with_simple_aliased_ref():
    # (the output fusion's Ref write goes back through pallas_call's
    # input_output_aliases)
    got = _aliased_matmul("mjax", "simple_aliased_ref")
    np.testing.assert_allclose(got[0], _aliased_matmul("jax", "simple_aliased_ref")[0],
                               rtol=1e-6, atol=1e-5)
    np.testing.assert_allclose(got[0], _aliased_matmul("mjax", "simple_aliased_ref",
                                                       fuse_all=False)[0], rtol=1e-6)
    np.testing.assert_allclose(got[0], np.maximum(X @ Y + A, 0), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("lib", ["jax", "mjax"])
def test_matmul_forbids_unsupported_ref_access(lib):
    # (the input fusion reads the Ref the output fusion writes: the same Ref object
    # among both fusions' values, which fusible_matmul refuses)
    with pytest.raises(ValueError, match="fusible_matmul does not support"):
        _aliased_matmul(lib, "unsupported_ref_access")


@pytest.mark.parametrize("lib", ["jax", "mjax"])
def test_matmul_with_writes_that_do_not_depend_on_output(lib):
    with pytest.raises(ValueError, match="must depend on an output"):
        _aliased_matmul(lib, "writes_not_depending_on_output")
