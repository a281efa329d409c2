"""User-defined primitives (jax.extend.core.Primitive) under every transformation.

The same definition (JAX's "How primitives work" multiply_add, with impl, abstract eval,
JVP, transpose, batching and lower_fun lowering) is made once against real jax and once
against mjax; each transformation's result is compared between the two and with NumPy.
"""
from __future__ import annotations

import subprocess
import sys
import types

import jax
import jax.extend.core as jax_extend_core
import jax.interpreters.ad as jax_ad
import jax.interpreters.batching as jax_batching
import jax.interpreters.mlir as jax_mlir
import numpy as np
import pytest
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

import mjax
import mjax.extend.core as mjax_extend_core
from mjax import core as mjax_core
from mjax.dialect import context
from mjax.interpreters import ad as mjax_ad
from mjax.interpreters import batching as mjax_batching
from mjax.interpreters import mlir as mjax_mlir
from mjax.passes import run_pipeline

from frontend_util import tol

JAX = types.SimpleNamespace(jax=jax, Primitive=jax_extend_core.Primitive,
                            ShapedArray=jax.core.ShapedArray, ad=jax_ad,
                            batching=jax_batching, mlir=jax_mlir)
MJAX = types.SimpleNamespace(jax=mjax, Primitive=mjax_extend_core.Primitive,
                             ShapedArray=mjax_core.ShapedArray, ad=mjax_ad,
                             batching=mjax_batching, mlir=mjax_mlir)


def define(m, name="multiply_add", jvp=True, transpose=True, batch=True, lower=True):
    """multiply_add(x, y, z) = x * y + z as a primitive of `m` (JAX or MJAX)."""
    jnp = m.jax.numpy
    p = m.Primitive(name)

    def multiply_add(x, y, z):
        return p.bind(x, y, z)

    p.def_impl(lambda x, y, z: np.add(np.multiply(x, y), z))
    p.def_abstract_eval(lambda xs, ys, zs: m.ShapedArray(xs.shape, xs.dtype))
    if lower:
        m.mlir.register_lowering(p, m.mlir.lower_fun(lambda x, y, z: x * y + z,
                                                     multiple_results=False))

    def jvp_rule(primals, tangents):
        (x, y, z), (xt, yt, zt) = primals, tangents
        out = multiply_add(x, y, z)
        xt, yt, zt = map(m.ad.instantiate_zeros, (xt, yt, zt))
        return out, multiply_add(xt, y, multiply_add(x, yt, zt))

    def transpose_rule(ct, x, y, z):
        if not m.ad.is_undefined_primal(x):     # linear in y (and z)
            ct_y = None if type(ct) is m.ad.Zero else multiply_add(x, ct, jnp.zeros_like(x))
            return None, ct_y, ct
        ct_x = None if type(ct) is m.ad.Zero else multiply_add(ct, y, jnp.zeros_like(y))
        return ct_x, None, ct

    def batch_rule(args, dims):
        size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
        moved = [m.batching.bdim_at_front(a, d, size) for a, d in zip(args, dims)]
        return multiply_add(*moved), 0

    if jvp:
        m.ad.primitive_jvps[p] = jvp_rule
    if transpose:
        m.ad.primitive_transposes[p] = transpose_rule
    if batch:
        m.batching.primitive_batchers[p] = batch_rule
    return p, multiply_add


PRIMS = {}


def prim(m):
    if id(m) not in PRIMS:
        PRIMS[id(m)] = define(m)
    return PRIMS[id(m)][1]


def f_scalar(m):
    ma = prim(m)
    return lambda x, y: ma(x, y, 10.0) * m.jax.numpy.sin(x)


def f_vec(m):
    ma = prim(m)
    return lambda x, y: m.jax.numpy.sum(ma(x, ma(x, y, x), x + 2.0))


X, Y = np.float32(2.0), np.float32(3.0)
XS = np.linspace(-1.0, 2.0, 4, dtype=np.float32)
YS = np.linspace(0.5, 1.5, 4, dtype=np.float32)

CASES = {
    "eager": lambda m: f_scalar(m)(X, Y),
    "jit": lambda m: m.jax.jit(f_scalar(m))(X, Y),
    "grad": lambda m: m.jax.grad(f_scalar(m), (0, 1))(X, Y),
    "jit_grad": lambda m: m.jax.jit(m.jax.grad(f_scalar(m), (0, 1)))(X, Y),
    "grad_jit": lambda m: m.jax.grad(m.jax.jit(f_scalar(m)), (0, 1))(X, Y),
    "jvp": lambda m: m.jax.jvp(f_scalar(m), (X, Y), (np.float32(0.5), np.float32(-1.0))),
    "vjp": lambda m: m.jax.vjp(f_vec(m), XS, YS)[1](np.float32(1.5)),
    "vmap": lambda m: m.jax.vmap(f_scalar(m))(XS, YS),
    "vmap_in_axes": lambda m: m.jax.vmap(f_scalar(m), (0, None))(XS, Y),
    "vmap_grad": lambda m: m.jax.vmap(m.jax.grad(f_scalar(m), (0, 1)))(XS, YS),
    "grad_vmap": lambda m: m.jax.grad(lambda x, y: m.jax.vmap(f_scalar(m))(x, y).sum(),
                                      (0, 1))(XS, YS),
    "jit_vmap_grad": lambda m: m.jax.jit(m.jax.vmap(m.jax.grad(f_vec(m), (0, 1))))(
        XS.reshape(2, 2), YS.reshape(2, 2)),
    "hessian": lambda m: m.jax.hessian(f_vec(m))(XS, YS),
    "jacfwd": lambda m: m.jax.jacfwd(f_vec(m), (0, 1))(XS, YS),
    "grad_linear_operands": lambda m: m.jax.grad(
        lambda y: (prim(m)(XS, y, y) * YS).sum())(YS),
}



def _scanned(m):
    ma = prim(m)

    def f(x, y):
        def body(c, _):
            return ma(c, y, x) * 0.5, c.sum()
        c, s = m.jax.lax.scan(body, x, None, length=3)
        return c.sum() + s.sum()
    return f


def _looped(m):
    ma = prim(m)
    return lambda x, y: m.jax.lax.fori_loop(0, 3, lambda i, c: ma(c, y, x) * 0.5, x).sum()


def _conded(m):
    ma = prim(m)
    return lambda x, y: m.jax.lax.cond(x.sum() > 0, lambda: ma(x, y, x).sum(),
                                       lambda: (x * y).sum())


# Inside checkpoint and control flow.
CASES.update({
    "grad_checkpoint": lambda m: m.jax.grad(m.jax.checkpoint(f_vec(m)), (0, 1))(XS, YS),
    "jit_grad_scan": lambda m: m.jax.jit(m.jax.grad(_scanned(m), (0, 1)))(XS, YS),
    "vmap_scan": lambda m: m.jax.vmap(_scanned(m))(XS.reshape(2, 2), YS.reshape(2, 2)),
    "grad_cond": lambda m: m.jax.grad(_conded(m), (0, 1))(XS, YS),
    "jvp_fori_loop": lambda m: m.jax.jvp(_looped(m), (XS, YS), (YS, XS)),
    "vmap_fori_loop": lambda m: m.jax.vmap(_looped(m))(XS.reshape(2, 2), YS.reshape(2, 2)),
})

@pytest.mark.parametrize("case", sorted(CASES))
def test_same_as_jax(case):
    want = CASES[case](JAX)
    got = CASES[case](MJAX)
    jax.tree_util.tree_map(
        lambda w, g: np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-6,
                                                atol=1e-6), want, got)


def test_against_numpy():
    f = f_scalar(MJAX)
    np.testing.assert_allclose(mjax.jit(f)(X, Y), (X * Y + 10) * np.sin(X), rtol=1e-6)
    # d/dx (x*y + 10) sin x = y sin x + (x*y + 10) cos x
    gx, gy = mjax.grad(f, (0, 1))(X, Y)
    np.testing.assert_allclose(gx, Y * np.sin(X) + (X * Y + 10) * np.cos(X), rtol=1e-6)
    np.testing.assert_allclose(gy, X * np.sin(X), rtol=1e-6)


def test_make_jaxpr_shows_the_primitive():
    text = str(mjax.make_jaxpr(f_scalar(MJAX))(X, Y))
    assert "multiply_add a b 10.0:f32[]" in text, text
    assert str(jax.make_jaxpr(f_scalar(JAX))(X, Y)).count("multiply_add") == \
        text.count("multiply_add")


def test_params_and_multiple_results():
    for m in (JAX, MJAX):
        p = m.Primitive("split_scale")
        p.multiple_results = True
        p.def_impl(lambda x, *, scale: [x[:2] * scale, x[2:] * scale])
        p.def_abstract_eval(lambda x, *, scale, m=m: (
            m.ShapedArray((2,), x.dtype), m.ShapedArray((x.shape[0] - 2,), x.dtype)))
        m.mlir.register_lowering(p, m.mlir.lower_fun(
            lambda x, *, scale: [x[:2] * scale, x[2:] * scale], multiple_results=True))
        m.p = p
    x = np.arange(5, dtype=np.float32)
    for run in (lambda m: m.p.bind(x, scale=3.0), lambda m: m.jax.jit(
            lambda x: m.p.bind(x, scale=3.0))(x)):
        want, got = run(JAX), run(MJAX)
        for w, g in zip(want, got):
            np.testing.assert_allclose(g, w)
    text = str(mjax.make_jaxpr(lambda x: MJAX.p.bind(x, scale=3.0))(x))
    assert "split_scale[scale=3.0] a" in text, text


def test_lowering_written_with_mlir_builders():
    p = MJAX.Primitive("fma_direct")
    p.def_abstract_eval(lambda x, y, z: MJAX.ShapedArray(x.shape, x.dtype))

    def lowering(ctx, x, y, z):
        assert [a.shape for a in ctx.avals_in] == [(3,)] * 3
        return [stablehlo.add(stablehlo.multiply(x, y), z)]
    mjax_mlir.register_lowering(p, lowering)
    a = np.arange(3, dtype=np.float32)
    got = mjax.jit(lambda x: p.bind(x, x, 1.0 + x))(a)
    np.testing.assert_allclose(got, a * a + 1 + a)


def test_mjax_opt_prints_and_lowers_it():
    closed = mjax.make_jaxpr(f_scalar(MJAX))(X, Y)
    text = str(closed.mlir)
    assert '"jaxpr.custom_primitive"' in text and 'name = "multiply_add"' in text
    proc = subprocess.run([sys.executable, "-m", "mjax.passes.opt", "-", "--jaxpr-verify"],
                          input=text, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert 'name = "multiply_add"' in proc.stdout
    # In this process the rule handle resolves: the passes differentiate and lower it.
    with context():
        module = ir.Module.parse(text)
        run_pipeline(module, "jaxpr-expand-transforms,jaxpr-inline,jaxpr-to-stablehlo")
    assert "custom_primitive" not in str(module) and "stablehlo.multiply" in str(module)
    # Another process has no Python rules for the handle: the pass says so at the op.
    proc = subprocess.run([sys.executable, "-m", "mjax.passes.opt", "-",
                           "--jaxpr-expand-transforms", "--jaxpr-to-stablehlo"], input=text,
                          capture_output=True, text=True)
    assert proc.returncode != 0
    assert "names no user-defined primitive of this process" in proc.stderr


# ---- missing rules: JAX's errors -----------------------------------------------------------
MISSING = {
    "jvp": (dict(jvp=False), lambda m, f: m.jax.grad(f)(X),
            "Differentiation rule for 'nojvp' not implemented"),
    "transpose": (dict(transpose=False), lambda m, f: m.jax.grad(f)(X),
                  "Transpose rule (for reverse-mode differentiation) for 'notranspose' "
                  "not implemented"),
    "batch": (dict(batch=False), lambda m, f: m.jax.vmap(f)(XS),
              "Batching rule for 'nobatch' not implemented"),
    "lower": (dict(lower=False), lambda m, f: m.jax.jit(f)(X),
              "MLIR translation rule for primitive 'nolower' not found for platform cpu"),
}


@pytest.mark.parametrize("rule", sorted(MISSING))
def test_missing_rule_is_jax_error(rule):
    kwargs, run, message = MISSING[rule]
    for m in (JAX, MJAX):
        _, ma = define(m, name=f"no{rule}", **kwargs)
        with pytest.raises(NotImplementedError) as info:
            run(m, lambda x: ma(x, 3.0, 1.0) if rule != "transpose" else ma(3.0, x, 1.0))
        assert message in str(info.value), (m.jax.__name__, str(info.value))


def test_missing_impl_and_abstract_eval():
    for m in (JAX, MJAX):
        p = m.Primitive("bare")
        with pytest.raises(NotImplementedError, match="Evaluation rule for 'bare' not "
                                                      "implemented"):
            p.bind(1.0)
        with pytest.raises(NotImplementedError, match="Abstract evaluation for 'bare' not "
                                                      "implemented"):
            m.jax.jit(lambda x: p.bind(x))(1.0)
    assert repr(p) == str(p) == "bare" and p.name == "bare" and not p.multiple_results


# ---- JAX's Primitive objects of mjax's own ops ----------------------------------------------
def test_every_jax_lax_primitive_object_exists_and_is_shared():
    import mjax.extend.core.primitives as mprims
    names = [n for n in dir(jax.lax) if n.endswith("_p")]
    missing = [n for n in names if not hasattr(mjax.lax, n)]
    assert not missing, missing
    for n in names:
        p = getattr(mjax.lax, n)
        assert isinstance(p, mjax_extend_core.Primitive) and repr(p) == repr(getattr(jax.lax, n))
        if hasattr(mprims, n):
            assert getattr(mprims, n) is p
    table = {mjax.lax.stop_gradient_p: "sg", mjax.lax.add_p: "add"}
    assert table[mjax.lax.add_p] == "add" and mjax.lax.add_p is not mjax.lax.mul_p
    import mjax.custom_derivatives as mcd
    assert mcd.custom_jvp_call_p is mprims.custom_jvp_call_p
    assert repr(mcd.custom_jvp_call_p) == repr(jax.custom_derivatives.custom_jvp_call_p)


def test_primitive_objects_bind_their_op():
    a, b = np.arange(3, dtype=np.float32), np.full(3, 2.0, np.float32)
    np.testing.assert_allclose(mjax.lax.add_p.bind(a, b), a + b)
    np.testing.assert_allclose(mjax.jit(lambda x: mjax.lax.sin_p.bind(x))(a), np.sin(a),
                               rtol=1e-6)
    np.testing.assert_allclose(mjax.lax.square_p.bind(a), jax.lax.square_p.bind(a))
    text = str(mjax.make_jaxpr(lambda x: mjax.lax.mul_p.bind(x, x))(a))
    assert "mul a a" in text, text


def test_ensure_compile_time_eval_as_jax():
    def f(m):
        def g(x):
            with m.jax.ensure_compile_time_eval():
                c = m.jax.numpy.sin(np.float32(1.0)) * 2     # concrete: evaluated now
                staged = x * 2                                # a tracer: staged
            return c, isinstance(c, m.jax.core.Tracer), isinstance(staged, m.jax.core.Tracer)
        return g
    for m in (JAX, MJAX):
        out = {}

        def g(x, m=m):
            c, c_traced, s_traced = f(m)(x)
            out.update(c=float(c), c_traced=c_traced, s_traced=s_traced)
            return x
        m.jax.jit(g)(np.float32(1.0))
        assert out == dict(c=pytest.approx(2 * np.sin(1.0)), c_traced=False, s_traced=True)


def test_named_call():
    def f(x):
        return x * 3
    g = mjax.named_call(f, name="triple")
    assert g.__name__ == "f"
    np.testing.assert_allclose(mjax.jit(g)(np.float32(2.0)), 6.0)
    assert "triple" in mjax.jit(g).lower(np.float32(2.0)).as_text(debug_info=True)


def test_python_dash_m_mjax_dash_c():
    proc = subprocess.run([sys.executable, "-m", "mjax", "-c",
                           "import sys, jax, jax.numpy as jnp; "
                           "print(jax.lax.add_p, float(jnp.ones(3).sum()), sys.argv)", "x"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "add 3.0 ['-c', 'x']"


def test_rules_that_call_jitted_and_custom_jvp_functions():
    """A transpose rule whose body holds calls and custom_jvp calls (equinox's error_if
    in a transpose rule): they are traced into the module the transposition builds."""
    def run(m):
        p = m.Primitive("double")
        p.def_impl(lambda x: x * 2)
        p.def_abstract_eval(lambda x: m.ShapedArray(x.shape, x.dtype))
        m.mlir.register_lowering(p, m.mlir.lower_fun(lambda x: x * 2, multiple_results=False))

        @m.jax.custom_jvp
        def twice(c):
            return c * 2
        twice.defjvp(lambda xs, ts: (twice(xs[0]), ts[0] * 2))
        m.ad.deflinear2(p, lambda ct, x: [m.jax.jit(twice)(ct)])
        m.batching.defvectorized(p)
        f = lambda x: m.jax.numpy.sin(p.bind(x)).sum()
        return (m.jax.jit(m.jax.grad(f))(XS), m.jax.vmap(m.jax.grad(f))(XS.reshape(2, 2)),
                m.jax.jit(m.jax.hessian(f))(XS))
    for w, g in zip(run(JAX), run(MJAX)):
        np.testing.assert_allclose(g, w, rtol=1e-6)


@pytest.mark.parametrize("kind", ["custom_jvp", "jit", "checkpoint", "mixed"])
def test_jvp_rules_that_apply_calls_to_tangents(kind):
    """A JVP rule applying a custom_jvp function, a jit or a checkpoint to the tangents:
    under grad the call sits in the linear part, transposed through its callee (JAX's
    partial evaluation stages a custom_jvp function's primal)."""
    def run(m):
        jnp = m.jax.numpy

        @m.jax.custom_jvp
        def scale(a, t):
            return a * t
        scale.defjvp(lambda p, t: (scale(*p), t[0] * p[1] + p[0] * t[1]))
        apply = {"custom_jvp": lambda a, t: scale(a, t),
                 "jit": m.jax.jit(lambda a, t: a * t),
                 "checkpoint": m.jax.checkpoint(lambda a, t: a * t),
                 "mixed": lambda a, t: scale(jnp.sin(a), m.jax.jit(lambda u: u * 2.0)(t))}
        p = m.Primitive(f"sin_{kind}")
        p.def_impl(lambda x: np.sin(x))
        p.def_abstract_eval(lambda x: m.ShapedArray(x.shape, x.dtype))
        m.mlir.register_lowering(p, m.mlir.lower_fun(jnp.sin, multiple_results=False))
        m.ad.primitive_jvps[p] = lambda xs, ts: (
            p.bind(xs[0]), apply[kind](jnp.cos(xs[0]), m.ad.instantiate_zeros(ts[0])))
        m.batching.defvectorized(p)
        f = lambda x: (p.bind(x) ** 2).sum()
        return (m.jax.grad(f)(XS), m.jax.jit(m.jax.grad(f))(XS),
                m.jax.vmap(m.jax.grad(f))(XS.reshape(2, 2)),
                m.jax.linear_transpose(lambda t: m.jax.jvp(p.bind, (XS,), (t,))[1], XS)(XS))
    for w, g in zip(run(JAX), run(MJAX)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)


def test_effectful_primitive_is_kept_by_dce():
    class Noise(mjax_extend_core.Effect):
        pass
    noisy, quiet = MJAX.Primitive("noisy"), MJAX.Primitive("quiet")
    noisy.def_effectful_abstract_eval(lambda x: (MJAX.ShapedArray(x.shape, x.dtype),
                                                 {Noise()}))
    quiet.def_abstract_eval(lambda x: MJAX.ShapedArray(x.shape, x.dtype))
    text = str(mjax.make_jaxpr(lambda x: (noisy.bind(x), quiet.bind(x), x)[2])(X).mlir)
    assert 'effects = "Noise"' in text
    with context():
        module = ir.Module.parse(text)
        run_pipeline(module, "jaxpr-dce")
    assert 'name = "noisy"' in str(module) and 'name = "quiet"' not in str(module)


def test_integer_operands_and_unbatched_outputs():
    """An integer operand (its tangent a symbolic zero of float0), an integer result
    (no tangent), and a batcher that leaves a result unbatched."""
    def run(m):
        jnp = m.jax.numpy
        p = m.Primitive("scale_count")
        p.multiple_results = True
        p.def_impl(lambda x, n: [x * n, np.asarray(n * 2, np.int32)])
        p.def_abstract_eval(lambda x, n, m=m: (m.ShapedArray(x.shape, x.dtype),
                                               m.ShapedArray((), np.int32)))
        m.mlir.register_lowering(p, m.mlir.lower_fun(
            lambda x, n: [x * n.astype(x.dtype), (n * 2).astype(np.int32)]))

        def jvp(primals, tangents, m=m):
            (x, n), (xt, nt) = primals, tangents
            assert type(nt) is m.ad.Zero
            out = p.bind(x, n)
            return out, [p.bind(xt, n)[0], m.ad.Zero(m.ShapedArray((), m.jax.dtypes.float0))]
        m.ad.primitive_jvps[p] = jvp
        m.ad.primitive_transposes[p] = lambda cts, x, n: [p.bind(cts[0], n)[0], None]

        def batch(args, dims):
            (x, n), (dx, dn) = args, dims
            assert dn is None
            return p.bind(x, n), [dx, None]
        m.batching.primitive_batchers[p] = batch
        f = lambda x, n: jnp.sum(p.bind(x, n)[0] ** 2) + p.bind(x, n)[1]
        n = np.int32(3)
        return (m.jax.jit(f)(XS, n), m.jax.grad(f)(XS, n),
                m.jax.vmap(lambda x: tuple(p.bind(x, n)), out_axes=(0, None))(XS.reshape(2, 2)),
                m.jax.jit(m.jax.vmap(m.jax.grad(f), (0, None)))(XS.reshape(2, 2), n))
    for w, g in zip(jax.tree_util.tree_leaves(run(JAX)), jax.tree_util.tree_leaves(run(MJAX))):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)


def test_registrars_defbilinear_defjvp2_deflinear_defbroadcasting():
    """JAX's registrars: defbilinear, defjvp2 (a rule per operand, given the output),
    deflinear, and the defbroadcasting / defvectorized batchers."""
    def run(m):
        jnp = m.jax.numpy
        mul = m.Primitive("my_mul")
        mul.def_impl(lambda x, y: x * y)
        mul.def_abstract_eval(lambda x, y: x)
        m.mlir.register_lowering(mul, m.mlir.lower_fun(lambda x, y: x * y, False))
        m.ad.defbilinear(mul, lambda ct, x, y: mul.bind(ct, y),
                         lambda ct, x, y: mul.bind(x, ct))
        m.batching.defbroadcasting(mul)
        ex = m.Primitive("my_exp")
        ex.def_impl(np.exp)
        ex.def_abstract_eval(lambda x: x)
        m.mlir.register_lowering(ex, m.mlir.lower_fun(jnp.exp, False))
        m.ad.defjvp2(ex, lambda t, ans, x: mul.bind(t, ans))
        m.batching.defvectorized(ex)
        neg = m.Primitive("my_neg")
        neg.def_impl(np.negative)
        neg.def_abstract_eval(lambda x: x)
        m.mlir.register_lowering(neg, m.mlir.lower_fun(jnp.negative, False))
        m.ad.deflinear(neg, lambda ct: [neg.bind(ct)])
        m.batching.defvectorized(neg)
        f = lambda x, y: jnp.sum(neg.bind(ex.bind(mul.bind(x, y))))
        return (m.jax.jit(m.jax.grad(f, (0, 1)))(XS, YS),
                m.jax.vmap(m.jax.grad(f), (0, None))(XS.reshape(2, 2), YS[:2]),
                m.jax.jvp(f, (XS, YS), (YS, XS)))
    # (JAX runs my_exp's impl, NumPy's exp, on the host where mjax compiles its lowering:
    # on a TPU the chip's exp differs by a few ulps)
    for w, g in zip(jax.tree_util.tree_leaves(run(JAX)), jax.tree_util.tree_leaves(run(MJAX))):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=tol(1e-6, 1e-5))


def test_batchers_taking_the_axis():
    """axis_primitive_batchers (size, name, trace type, vals, dims) and
    fancy_primitive_batchers (axis data, vals, dims), as equinox registers them."""
    def run(m):
        jnp = m.jax.numpy
        outs = []
        for table in ("axis", "fancy"):
            p = m.Primitive(f"twice_{table}")
            p.def_impl(lambda x: 2 * x)
            p.def_abstract_eval(lambda x: x)
            m.mlir.register_lowering(p, m.mlir.lower_fun(lambda x: 2 * x, False))
            seen = []

            def axis_rule(size, name, trace_type, vals, dims, p=p, seen=seen):
                seen.append(size)
                return p.bind(vals[0]), dims[0]

            def fancy_rule(axis_data, vals, dims, p=p, seen=seen):
                seen.append(axis_data.size)
                return p.bind(vals[0]), dims[0]

            if table == "axis":
                m.batching.axis_primitive_batchers[p] = axis_rule
            else:
                m.batching.fancy_primitive_batchers[p] = fancy_rule
            out = m.jax.vmap(lambda x: p.bind(x) + 1, in_axes=1)(jnp.ones((2, 3)))
            outs.append((np.asarray(out), seen[0]))
        return outs
    for (w, ws), (g, gs) in zip(run(JAX), run(MJAX)):
        np.testing.assert_array_equal(g, w)
        assert gs == ws == 3


@pytest.mark.parametrize("m", [MJAX, JAX], ids=["mjax", "jax"])
def test_lower_fun_that_vmaps_another_user_primitive(m):
    """A `lower_fun` lowering whose function vmaps a user primitive (equinox's loops do):
    the primitives its batching binds in turn are lowered too."""
    inner = m.Primitive("scaled_inner")
    inner.def_impl(lambda x: x * 2)
    inner.def_abstract_eval(lambda a: m.ShapedArray(a.shape, a.dtype))
    m.mlir.register_lowering(inner, m.mlir.lower_fun(lambda x: x * 2,
                                                     multiple_results=False))
    # (batched by binding itself again on the batched operand)
    m.batching.primitive_batchers[inner] = lambda args, dims: (inner.bind(args[0]), dims[0])
    outer = m.Primitive("rowwise_outer")
    outer.def_impl(lambda x: x * 2 + 1)
    outer.def_abstract_eval(lambda a: m.ShapedArray(a.shape, a.dtype))
    m.mlir.register_lowering(outer, m.mlir.lower_fun(
        lambda x: m.jax.vmap(inner.bind)(x) + 1, multiple_results=False))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(np.asarray(m.jax.jit(outer.bind)(x)), x * 2 + 1)


@pytest.mark.parametrize("m", [MJAX, JAX], ids=["mjax", "jax"])
def test_a_jvp_rules_error_comes_before_grads_output_check(m):
    """JAX differentiates before it checks grad's output: a rule's own error (equinox's
    nontraceable) is what a list-returning function raises under grad."""
    p = m.Primitive("refuses_tangents")
    p.def_impl(lambda x: x)
    p.def_abstract_eval(lambda a: m.ShapedArray(a.shape, a.dtype))

    def refuse(primals, tangents):
        raise RuntimeError("no tangents here")
    m.ad.primitive_jvps[p] = refuse
    f = lambda x: [p.bind(x).sum()]          # noqa: E731  (not a scalar output)
    for g in (m.jax.grad(f), m.jax.jit(m.jax.grad(f))):
        with pytest.raises(RuntimeError, match="no tangents here"):
            g(np.ones(3, np.float32))


@pytest.mark.parametrize("m", [MJAX, JAX], ids=["mjax", "jax"])
def test_lowering_rule_calling_python_through_emit_python_callback(m):
    """A lowering rule written with MLIR's builders that runs Python on the host
    (equinox's noinline): mlir.emit_python_callback gives the custom call's results."""
    p = m.Primitive("host_cube")
    p.def_impl(lambda x: np.asarray(x) ** 3)
    p.def_abstract_eval(lambda a: m.ShapedArray(a.shape, a.dtype))
    calls = []

    def on_host(x):
        calls.append(np.shape(x))
        return [np.asarray(x) ** 3]

    def rule(ctx, x):
        results, _, keepalive = m.mlir.emit_python_callback(
            ctx, on_host, None, [x], ctx.avals_in, ctx.avals_out, has_side_effect=False)
        ctx.module_context.add_keepalive(keepalive)
        return results
    m.mlir.register_lowering(p, rule)
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(m.jax.jit(p.bind)(x)), x ** 3)
    np.testing.assert_allclose(np.asarray(m.jax.jit(lambda v: p.bind(v) + 1)(x)), x ** 3 + 1)
    assert calls == [(4,), (4,)]


def test_emit_python_callback_in_a_fresh_process():
    # (the rule registers the process's first callback while the program lowers: the
    # host-callback pass must still see it; a segfault in XLA's call before)
    code = '''
import numpy as np, mjax
from mjax.extend.core import Primitive
from mjax.interpreters import mlir
from mjax.core import ShapedArray
p = Primitive("host_cube")
p.def_impl(lambda x: np.asarray(x) ** 3)
p.def_abstract_eval(lambda a: ShapedArray(a.shape, a.dtype))
mlir.register_lowering(p, lambda ctx, x: mlir.emit_python_callback(
    ctx, lambda v: [np.asarray(v) ** 3], None, [x], ctx.avals_in, ctx.avals_out,
    has_side_effect=False)[0])
print(np.asarray(mjax.jit(p.bind)(np.arange(4, dtype=np.float32))).tolist())
'''
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip().splitlines()[-1] == "[0.0, 1.0, 8.0, 27.0]"
