"""Eager transformations round as JAX's op-by-op evaluation (mjax/ad/op_by_op.py): vmap,
grad and jvp called outside jit, bit for bit against JAX's eager calls. Before, the whole
transformed function ran as one fused XLA program, whose multiply-adds rounded once (an
ulp off JAX's in float32)."""
import jax
import numpy as np
import pytest

import mjax
import mjax.numpy as mnp
from mjax.ad import op_by_op
from mjax.runtime.backend import platform_record
from mjax.tracing.staging import trace_function

_R = np.random.default_rng(15)
X, Y, Z = (_R.normal(size=(64, 8)).astype(np.float32) for _ in range(3))
W = _R.normal(size=(8, 3)).astype(np.float32)

CASES = {
    "vmap_fma": lambda L: L.vmap(lambda a, b, c: a * b + c),
    "vmap_sincos": lambda L: L.vmap(lambda a, b, c: L.numpy.sin(a) * L.numpy.cos(b) + a),
    "vmap_chain": lambda L: L.vmap(lambda a, b, c: (a - b) * L.numpy.tanh(c) - a * a),
    "grad_tanh": lambda L: L.grad(lambda a, b, c: L.numpy.sum(L.numpy.tanh(a * 2.0) ** 2)),
    "grad_mixed": lambda L: L.grad(
        lambda a, b, c: L.numpy.sum(L.numpy.sin(a) * b + L.numpy.exp(a * 0.1) * c)),
    "vmap_grad": lambda L: L.vmap(L.grad(
        lambda a, b, c: L.numpy.sum(L.numpy.sin(a) * a + b * c))),
    "grad_mse": lambda L: L.grad(lambda a, b, c: L.numpy.sum((a @ W - b[:, :3]) ** 2)),
    "grad_softmax": lambda L: L.grad(lambda a, b, c: L.numpy.sum(L.nn.softmax(a) * b)),
    "vmap_softmax": lambda L: L.vmap(lambda a, b, c: L.nn.softmax(a)),
    "grad_logsumexp": lambda L: L.grad(lambda a, b, c: L.nn.logsumexp(a * b)),
    "grad_norm": lambda L: L.grad(lambda a, b, c: L.numpy.linalg.norm(a * b)),
    "vmap_dot": lambda L: L.vmap(lambda a, b, c: a @ W + 1.0),
    "jacfwd": lambda L: L.jacfwd(lambda a, b, c: L.numpy.sin(a[:3, 0]) * a[:3, 1] + c[:3, 2]),
    "jvp_sin": lambda L: (lambda a, b, c: L.jvp(lambda u: L.numpy.sin(u) * c + u,
                                                (a,), (b,))[1]),
}


def _same(got, want):
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape
    assert g.tobytes() == w.tobytes(), np.max(np.abs(g.astype(np.float64) - w))


@pytest.mark.parametrize("name", sorted(CASES))
def test_eager_transformation_rounds_as_jax(name):
    make = CASES[name]
    _same(make(mjax)(X, Y, Z), make(jax)(X, Y, Z))
    _same(make(mjax)(X, Y, Z), make(jax)(X, Y, Z))     # (the program reused)


def test_jit_of_a_transformation_stays_fused_as_jax():
    # Under jit both fuse the whole function: the multiply-add rounds once in both.
    f = lambda L: L.jit(L.vmap(lambda a, b, c: a * b + c))  # noqa: E731
    _same(f(mjax)(X, Y, Z), f(jax)(X, Y, Z))
    if jax.default_backend() == "cpu":    # (a fused multiply-add there; not on a TPU)
        assert np.asarray(f(mjax)(X, Y, Z)).tobytes() != (X * Y + Z).tobytes()


def test_which_programs_run_op_by_op():
    cpu = dict(platform_record("cpu").op_by_op_options)
    assert cpu == {"xla_disable_hlo_passes": "fusion"}
    plain = trace_function(mjax.grad(lambda a: mnp.sum(mnp.tanh(a) * a)), (X,), {}).module
    assert op_by_op.compiler_options(plain, "cpu", False) == cpu
    # a traced call of a function JAX jits (jnp.var's program fuses in JAX as well)
    assert op_by_op.compiler_options(plain, "cpu", True) == {}
    # a primitive XLA expands into a fused polynomial (JAX's erf_inv program)
    poly = trace_function(mjax.vmap(mjax.scipy.special.erfinv), (X * 0.1,), {}).module
    assert op_by_op.compiler_options(poly, "cpu", False) == {}
    # a user's jit inside
    jitted = trace_function(mjax.vmap(mjax.jit(lambda a: a * a + a)), (X,), {}).module
    assert op_by_op.compiler_options(jitted, "cpu", False) == {}


@pytest.mark.parametrize("name", ["var", "std", "mean"])
def test_vmap_of_a_function_jax_jits_stays_fused(name):
    f = lambda L: L.vmap(getattr(L.numpy, name))  # noqa: E731
    _same(f(mjax)(X), f(jax)(X))
