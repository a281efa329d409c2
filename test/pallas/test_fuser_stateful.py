"""Fusions closing over Refs (fuser.get_stateful_input_fusion_values and
get_stateful_output_fusion_values) against JAX's: the fusible matmul of JAX's
tpu_fusible_matmul_with_stateful_fusions_test with read-only Refs (its pallas_call form,
interpreted), and NumPy. Writes to Refs in fusions are not supported by mjax yet: they
are a NotImplementedError, never a wrong value."""
import numpy as np
import pytest

import jax  # noqa: F401  (the oracle; fuser_programs imports it)
from fuser_programs import fusible_matmul, namespace

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


def test_writes_to_refs_are_not_supported_yet():
    ns = namespace("mjax")
    jax, jnp, fuser = ns.jax, ns.jnp, ns.fuser

    @jax.jit
    def run(x, y, b):
        b_ref = jax.new_ref(b)

        def matmul(x, y):
            b_ref[...] = jnp.maximum(fusible_matmul(ns, x, y) + b_ref[...], 0.0)
        fuser.fuse(matmul)(x, y)
        return jax.ref.freeze(b_ref)
    with pytest.raises(NotImplementedError, match="writing to Refs"):
        run(X, Y, B)

    @jax.jit
    def values(b):
        b_ref = jax.new_ref(b)

        def z(v):
            b_ref[...] = v
            return v
        return fuser.get_stateful_output_fusion_values(
            z, jax.ShapeDtypeStruct(b.shape, b.dtype))
    with pytest.raises(NotImplementedError, match="writing to a Ref"):
        values(B)

    @jax.jit
    def partial_read(b):
        b_ref = jax.new_ref(b)
        return fuser.get_stateful_input_fusion_values(lambda: b_ref[1:3] * 2)
    with pytest.raises(NotImplementedError, match="part of a Ref"):
        partial_read(B)
