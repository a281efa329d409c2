"""lax.rng_bit_generator (one jaxpr op, XLA's RngBitGenerator) and lax.ragged_dot_general's
three modes: values, jaxprs and errors against real jax."""
import contextlib
import subprocess
import sys

import jax
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from frontend_util import ON_TPU

KEY = np.arange(4, dtype=np.uint32)
KEYS = np.stack([KEY, KEY + 7, KEY + 9])


def _same(got, want):
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "uint32"])
@pytest.mark.parametrize("algorithm", ["RNG_DEFAULT", "RNG_THREE_FRY", "RNG_PHILOX"])
def test_bits_and_new_key_as_jax(dtype, algorithm):
    def run(lib):
        alg = getattr(lib.lax.RandomAlgorithm, algorithm)
        f = lambda k: lib.lax.rng_bit_generator(k, (3, 5), dtype, alg)  # noqa: E731
        return f(lib.numpy.asarray(KEY)), lib.jit(f)(lib.numpy.asarray(KEY))
    _same(run(mjax), run(jax))


@pytest.mark.parametrize("in_axes", [0, 1])
def test_vmap_as_jax(in_axes):
    """JAX's batching rule: the first key draws every member's bits; only it advances."""
    def run(lib):
        keys = lib.numpy.asarray(KEYS if in_axes == 0 else KEYS.T)
        f = lib.vmap(lambda k: lib.lax.rng_bit_generator(k, (2,)), in_axes=in_axes,
                     out_axes=in_axes)
        return f(keys), lib.jit(f)(keys)
    _same(run(mjax), run(jax))


def test_rbg_keys_under_vmap_as_jax():
    def run(lib):
        keys = lib.random.split(lib.random.key(3, impl="rbg"), 4)
        return lib.vmap(lambda k: lib.random.uniform(k, (2,)))(keys)
    _same(run(mjax), run(jax))


def test_jaxpr_as_jax():
    def text(lib):
        return str(lib.make_jaxpr(lambda k: lib.lax.rng_bit_generator(
            k, (2, 3), lib.numpy.uint8))(lib.numpy.asarray(KEY)))
    assert text(mjax) == text(jax)
    eqn = mjax.make_jaxpr(lambda k: mjax.lax.rng_bit_generator(k, (2,)))(KEY).eqns[0]
    assert eqn.primitive.name == "rng_bit_generator" and eqn.primitive.multiple_results
    assert eqn.primitive is mjax.lax.rng_bit_generator_p


def test_errors():
    with pytest.raises(TypeError, match="unsupported dtype int32"):
        mjax.lax.rng_bit_generator(KEY, (2,), jnp.int32)
    with pytest.raises(TypeError, match=r"key must be uint32\[4\] or uint64\[2\]"):
        mjax.lax.rng_bit_generator(np.zeros(3, np.uint32), (2,))
    with pytest.raises(TypeError, match=r"key must be uint32\[4\]"):
        mjax.lax.rng_bit_generator(np.zeros(4, np.int32), (2,))


def test_no_derivative_through_bits():
    f = lambda x, k: x * mjax.lax.rng_bit_generator(k, ())[1].astype(jnp.float32)  # noqa
    bits = np.asarray(mjax.lax.rng_bit_generator(KEY, ())[1]).astype(np.float32)
    np.testing.assert_allclose(mjax.grad(f)(1.0, KEY), bits)


# ---- ragged_dot_general -----------------------------------------------------------------
_rng = np.random.RandomState(0)
_R = lambda *s: _rng.randn(*s).astype(np.float32)  # noqa: E731
CASES = {
    "ragged_dot": (_R(7, 4), _R(3, 4, 5), np.array([2, 3, 1], np.int32),
                   ((([1], [1]), ([], [])), [0], [0])),
    "noncontracting_batched": (_R(2, 5, 3), _R(4, 2, 3, 2),
                               np.array([[1, 1, 2, 1], [0, 3, 0, 1]], np.int32),
                               ((([2], [2]), ([0], [1])), [1], [0])),
    "noncontracting_group_last": (_R(6, 3), _R(3, 4, 2), np.array([1, 3], np.int32),
                                  ((([1], [0]), ([], [])), [0], [2])),
    "contracting": (_R(3, 6), _R(6, 2), np.array([2, 3], np.int32),
                    ((([1], [0]), ([], [])), [1], [])),
    "contracting_batched": (_R(2, 3, 6), _R(2, 6, 4), np.array([[1, 5], [4, 2]], np.int32),
                            ((([2], [1]), ([0], [0])), [2], [])),
    "batch": (_R(3, 2, 4), _R(3, 4, 2), np.array([1, 2], np.int32),
              ((([2], [1]), ([0], [0])), [0], [])),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_ragged_dot_general_as_jax(case):
    lhs, rhs, gs, (dot_dims, ragged, group) = CASES[case]

    def fns(lib):
        dn = lib.lax.RaggedDotDimensionNumbers(dot_dims, ragged, group)
        f = lambda a, b: lib.lax.ragged_dot_general(a, b, gs, dn)  # noqa: E731
        return f, lambda a, b: (f(a, b) ** 2).sum()
    (f, loss), (jf, jloss) = fns(mjax), fns(jax)
    # On a TPU, JAX's program is XLA's ragged-dot instruction, which the TPU compiler
    # refuses with batch dimensions ("number of batch dimensions should be 0" in the
    # non-contracting mode, "Failed to create RaggedConvSpec" in the contracting one);
    # mjax's expansion into dot_general (JAX's on the other platforms) runs there.
    # JAX's answer is then its host CPU's (in float32, where the TPU's default
    # precision multiplies in bf16 passes).
    host = ON_TPU and case in ("noncontracting_batched", "contracting_batched")
    rtol = 1e-2 if host else 1e-5
    oracle = (lambda: jax.default_device(jax.devices("cpu")[0])) if host else \
        contextlib.nullcontext
    with oracle():
        want = jf(lhs, rhs)
    for got in [f(lhs, rhs), mjax.jit(f)(lhs, rhs)]:
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=rtol)
    # The gradient against JAX's directional derivatives (JAX's reverse mode and vmap
    # cover the non-contracting mode only).
    gl, gr = mjax.grad(loss, (0, 1))(lhs, rhs)
    for seed in range(3):
        r = np.random.RandomState(seed)
        vl, vr = r.randn(*lhs.shape).astype(np.float32), r.randn(*rhs.shape).astype(np.float32)
        with oracle():
            want = jax.jvp(jloss, (lhs, rhs), (vl, vr))[1]
        got = (np.asarray(gl) * vl).sum() + (np.asarray(gr) * vr).sum()
        np.testing.assert_allclose(got, np.asarray(want), rtol=max(rtol, 1e-4),
                                   atol=max(rtol, 1e-4))


def test_ragged_dot_errors_as_jax():
    lhs, rhs, gs, _ = CASES["ragged_dot"]
    D = mjax.lax.RaggedDotDimensionNumbers
    bad = [
        (lambda: mjax.lax.ragged_dot_general(lhs, rhs, gs.astype(np.float32),
                                             D((([1], [1]), ([], [])), [0], [0])),
         "group_sizes.dtype is subtype of np.integer"),
        (lambda: mjax.lax.ragged_dot_general(lhs, rhs, gs, D((([1], [1]), ([], [])), [0], [])),
         "exactly one rhs group dimension"),
        (lambda: mjax.lax.ragged_dot(lhs, rhs, np.array([1, 2])),
         "expected rhs group dimension size to be 2, got 3"),
        (lambda: mjax.lax.ragged_dot_general(lhs, rhs, gs, D((([1], [1]), ([], [])), [], [0])),
         "exactly one lhs ragged dimension"),
    ]
    for f, words in bad:
        with pytest.raises(TypeError, match=words):
            f()
    assert (D((([1], [1]), ([], [])), [0], [0])
            == D((((1,), (1,)), ((), ())), (0,), (0,)))


def test_without_jax_in_the_process():
    """The rbg path and ragged_dot in a process where jax was never imported."""
    code = ("import sys, numpy as np, mjax, mjax.numpy as jnp\n"
            "k = np.arange(4, dtype=np.uint32)\n"
            "_, b = mjax.vmap(lambda k: mjax.lax.rng_bit_generator(k, (2,)))(np.stack([k, k]))\n"
            "assert b.shape == (2, 2) and b.dtype == np.uint32\n"
            "out = mjax.lax.ragged_dot(jnp.ones((4, 2)), jnp.ones((2, 2, 3)), jnp.array([1, 2]))\n"
            "np.testing.assert_array_equal(np.asarray(out)[:3], 2.0)\n"
            "np.testing.assert_array_equal(np.asarray(out)[3], 0.0)\n"
            "assert 'jax' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True)


# ---- rng_uniform (XLA's stateful generator) ---------------------------------------------
def test_rng_uniform_draws():
    for a, b, dtype in [(0., 1., np.float32), (-3, 5, np.int32), (2.5, 2.75, np.float32)]:
        x = np.asarray(mjax.lax.rng_uniform(a, b, (1000,)))
        assert x.dtype == dtype and x.shape == (1000,)
        assert (x >= a).all() and (x < b).all() and len(np.unique(x)) > 1
    f = mjax.jit(lambda: (mjax.lax.rng_uniform(0., 1., (4,)), mjax.lax.rng_uniform(0., 1., (4,))))
    (p, q), (r, _) = f(), f()
    assert not np.array_equal(np.asarray(p), np.asarray(q))     # (two draws, not one merged)
    assert not np.array_equal(np.asarray(p), np.asarray(r))     # (each call draws anew)
    rows = np.asarray(mjax.vmap(lambda x: mjax.lax.rng_uniform(0., 1., (2,)) + x)(jnp.ones(3)))
    assert (rows == rows[0]).all()          # (unbatched bounds: one draw, as JAX's vmap)


def test_rng_uniform_jaxpr_and_errors_as_jax():
    assert (str(mjax.make_jaxpr(lambda: mjax.lax.rng_uniform(0, 5, (3,)))())
            == str(jax.make_jaxpr(lambda: jax.lax.rng_uniform(0, 5, (3,)))()))
    for args in [(0, 1.0, (2,)), (np.zeros(2, np.float32), np.float32(1), (2,))]:
        with pytest.raises(ValueError) as got:
            mjax.lax.rng_uniform(*args)
        with pytest.raises(ValueError) as want:
            jax.lax.rng_uniform(*args)
        assert str(got.value).split(" (in jaxpr")[0] == str(want.value)
    with pytest.raises(NotImplementedError):
        mjax.vmap(lambda a: mjax.lax.rng_uniform(a, 1., (2,)))(jnp.zeros(3))
    with pytest.raises(NotImplementedError):
        mjax.grad(lambda a: mjax.lax.rng_uniform(a, 1., ()))(0.)
    with pytest.raises(TypeError, match="rng_uniform does not accept dtype bool"):
        mjax.lax.rng_uniform(True, False, (2,))    # (JAX's compiler aborts the process)
