"""Autodiff passes end to end: IR with jaxpr.jvp/jaxpr.vjp -> --jaxpr-expand-transforms ->
lowering -> XLA, checked against finite differences and against `jax` (test-only oracle).

Every case of an op family is folded into ONE module and one XLA compile: per op, @main
returns the first-order JVP and VJP, second-order forward (jvp of jvp) and reverse (vjp
of vjp), and the primal at x +- h*t for central differences.
"""
from __future__ import annotations

import numpy as np
import pytest
from jaxlib.mlir import ir

from mjax.dialect import attributes as A
from mjax.dialect import context
from mjax.dialect.types import ShapedArray, tensor_type
from mjax.passes import PassError, run_pipeline
from mjax.passes.autodiff import jvp_function, vjp_functions
from mjax.runtime import get_backend

import jax  # noqa: E402  (the test-only oracle: missing, these tests fail)
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

PIPELINE = ("builtin.module(jaxpr-verify,jaxpr-expand-transforms,jaxpr-verify,jaxpr-inline,"
            "jaxpr-cse,jaxpr-dce,jaxpr-verify,jaxpr-to-stablehlo,canonicalize)")
RNG = np.random.default_rng(0)


@pytest.fixture(autouse=True, scope="module")
def jax_x64():
    """The oracle computes in float64 here; restored afterwards so other test modules in
    the same worker process see jax's default."""
    old = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", old)


def ttype(a) -> str:
    a = np.asarray(a)
    return str(tensor_type(ShapedArray(a.shape, a.dtype)))


def inexact(a) -> bool:
    return np.issubdtype(np.asarray(a).dtype, np.inexact)


def attr_text(params: dict) -> str:
    if not params:
        return ""
    with context():
        return "{" + ", ".join(f"{k} = {A.encode(v)}" for k, v in params.items()) + "}"


def compile_and_run(text: str, *args):
    ctx = context()
    with ctx, ir.Location.unknown(ctx):
        module = ir.Module.parse(text)
        run_pipeline(module, PIPELINE)
        assert "jaxpr." not in str(module)
        lowered = str(module)
    return get_backend().compile(lowered).run_numpy(*[np.asarray(a) for a in args])


class Case:
    """One op applied to concrete inputs, with its jax counterpart."""

    def __init__(self, op, jax_fn, *args, params=None, out=None, second_order=True,
                 fd_h=1e-6, fd=True, diff=None):
        self.op, self.jax_fn, self.params = op, jax_fn, params or {}
        self.second_order = second_order
        # fd=False where finite differences do not see the defined derivative
        # (stop_gradient); a larger fd_h where the op rounds to float32.
        self.fd, self.fd_h = fd, fd_h
        self.args = [np.asarray(a) for a in args]
        # diff: the differentiated args (default: every inexact one), as diff_args.
        self.default_diff = [i for i, a in enumerate(self.args) if inexact(a)]
        self.diff = self.default_diff if diff is None else list(diff)
        self.out = out  # output example (shape/dtype), computed with jax if None
        if self.out is None:
            self.out = np.asarray(jax_fn(*self.args))
        self.id = f"{op}{'_' + '_'.join(map(str, params.values())) if params else ''}"

    def fn_text(self, name):
        ins = ", ".join(f"%a{i}: {ttype(a)}" for i, a in enumerate(self.args))
        operands = ", ".join(f"%a{i}" for i in range(len(self.args)))
        types = ", ".join(ttype(a) for a in self.args)
        ot = ttype(self.out)
        return (f"func.func private @{name}({ins}) -> {ot} {{\n"
                f"  %0 = \"jaxpr.{self.op}\"({operands}) {attr_text(self.params)} : "
                f"({types}) -> {ot}\n  return %0 : {ot}\n}}\n")

    def tangent(self, i):
        a = self.args[i]
        t = RNG.standard_normal(a.shape)
        if np.iscomplexobj(a):
            t = t + 1j * RNG.standard_normal(a.shape)
        return t.astype(a.dtype)

    def cotangent(self):
        ct = RNG.standard_normal(self.out.shape)
        if np.iscomplexobj(self.out):
            ct = ct + 1j * RNG.standard_normal(self.out.shape)
        return ct.astype(self.out.dtype)

    def jax_f(self):
        """jax function of the differentiable args only."""
        def f(*d):
            full = list(self.args)
            for i, v in zip(self.diff, d):
                full[i] = v
            return self.jax_fn(*full)
        return f


def build_main(cases):
    """One module: per case, the function, its jvp/vjp wrappers and a @main that returns
    y, jvp tangent, vjp cotangents, jvp-of-jvp, vjp-of-vjp, f(x + h t), f(x - h t)."""
    funcs, main_args, main_vals, body, outs = [], [], [], [], []
    for k, c in enumerate(cases):
        f = f"f{k}"
        funcs.append(c.fn_text(f))
        n = len(c.args)
        ts = [c.tangent(i) for i in c.diff]
        ts2 = [c.tangent(i) for i in c.diff]
        ct, ct2 = c.cotangent(), [c.tangent(i) for i in c.diff]
        c.data = dict(t=ts, t2=ts2, ct=ct, ct2=ct2)
        # jvp wrapper: (x..., t...) -> tangent out; and vjp wrapper: (x..., ct) -> cts
        xin = ", ".join(f"%x{i}: {ttype(a)}" for i, a in enumerate(c.args))
        xs = [f"%x{i}" for i in range(n)]
        tin = ", ".join(f"%t{i}: {ttype(c.args[i])}" for i in c.diff)
        tvs = [f"%t{i}" for i in c.diff]
        ot = ttype(c.out)
        dtypes = [ttype(c.args[i]) for i in c.diff]
        argt = ", ".join([ttype(a) for a in c.args] + dtypes)
        da = ("" if c.diff == c.default_diff
              else f", diff_args = array<i64: {', '.join(map(str, c.diff))}>")
        funcs.append(
            f"func.func private @jvp{k}({xin}{', ' + tin if tin else ''}) -> {ot} {{\n"
            f"  %r:2 = \"jaxpr.jvp\"({', '.join(xs + tvs)}) {{callee = @{f}{da}}} : ({argt}) -> "
            f"({ot}, {ot})\n  return %r#1 : {ot}\n}}\n")
        nd = len(c.diff)
        rt = ", ".join(dtypes)
        funcs.append(
            f"func.func private @vjp{k}({xin}, %ct: {ot}) -> ({rt}) {{\n"
            f"  %r:{nd} = \"jaxpr.vjp\"({', '.join(xs)}, %ct) {{callee = @{f}{da}}} : "
            f"({', '.join([ttype(a) for a in c.args] + [ot])}) -> ({rt})\n"
            f"  return {', '.join(f'%r#{j}' for j in range(nd))} : {rt}\n}}\n")
        # main arguments for this case
        base = len(main_args)
        vals = list(c.args) + ts + ts2 + [ct] + ct2
        xp = [a.copy() for a in c.args]
        xm = [a.copy() for a in c.args]
        h = c.fd_h
        for i, t in zip(c.diff, ts):
            xp[i] = (c.args[i] + h * t).astype(c.args[i].dtype)
            xm[i] = (c.args[i] - h * t).astype(c.args[i].dtype)
        vals += xp + xm
        names = [f"%m{base + j}" for j in range(len(vals))]
        main_args += vals
        X = names[:n]
        Tn = names[n:n + nd]
        T2 = names[n + nd:n + 2 * nd]
        CT = names[n + 2 * nd]
        CT2 = names[n + 2 * nd + 1:n + 3 * nd + 1]
        XP = names[n + 3 * nd + 1:2 * n + 3 * nd + 1]
        XM = names[2 * n + 3 * nd + 1:]
        at = [ttype(a) for a in c.args]
        diff_x = list(range(n))  # in the wrappers, x args are 0..n-1
        dx = [i for i in diff_x if i in c.diff]
        p = f"%c{k}"
        body.append(f"  {p}y = \"jaxpr.call\"({', '.join(X)}) {{callee = @{f}}} : "
                    f"({', '.join(at)}) -> {ot}")
        body.append(f"  {p}jvp = \"jaxpr.call\"({', '.join(X + Tn)}) {{callee = @jvp{k}}} : "
                    f"({argt}) -> {ot}")
        body.append(f"  {p}vjp:{nd} = \"jaxpr.call\"({', '.join(X + [CT])}) "
                    f"{{callee = @vjp{k}}} : ({', '.join(at + [ot])}) -> ({rt})")
        # second order: forward d/dx along t2 of (x -> jvp(x, t)), and reverse: vjp of
        # (x -> vjp(x, ct)) with cotangent ct2. Cases without it return only first order.
        if c.second_order:
            body.append(f"  {p}jj:2 = \"jaxpr.jvp\"({', '.join(X + Tn + T2)}) {{callee = @jvp{k}, "
                        f"diff_args = array<i64: {', '.join(map(str, dx))}>}} : "
                        f"({argt}, {rt}) -> ({ot}, {ot})")
            body.append(f"  {p}vv:{nd} = \"jaxpr.vjp\"({', '.join(X + [CT] + CT2)}) "
                        f"{{callee = @vjp{k}, diff_args = array<i64: {', '.join(map(str, dx))}>}} "
                        f": ({', '.join(at + [ot])}, {rt}) -> ({rt})")
        body.append(f"  {p}yp = \"jaxpr.call\"({', '.join(XP)}) {{callee = @{f}}} : "
                    f"({', '.join(at)}) -> {ot}")
        body.append(f"  {p}ym = \"jaxpr.call\"({', '.join(XM)}) {{callee = @{f}}} : "
                    f"({', '.join(at)}) -> {ot}")
        second = ([f"{p}jj#1"] + [f"{p}vv#{j}" for j in range(nd)]) if c.second_order else []
        results = ([f"{p}y", f"{p}jvp"] + [f"{p}vjp#{j}" for j in range(nd)] + second
                   + [f"{p}yp", f"{p}ym"])
        rtypes = [ot, ot] + dtypes + ([ot] + dtypes if c.second_order else []) + [ot, ot]
        outs.append((results, rtypes))
    arg_decl = ", ".join(f"%m{j}: {ttype(a)}" for j, a in enumerate(main_args))
    all_res = [r for rs, _ in outs for r in rs]
    all_t = [t for _, ts in outs for t in ts]
    text = "\n".join(funcs)
    text += (f"func.func @main({arg_decl}) -> ({', '.join(all_t)}) {{\n" + "\n".join(body)
             + f"\n  return {', '.join(all_res)} : {', '.join(all_t)}\n}}\n")
    return text, main_args


def check_cases(cases, rtol=1e-6, atol=1e-8, fd_rtol=1e-4):
    text, args = build_main(cases)
    results = compile_and_run(text, *args)
    pos = 0
    failures = []
    for c in cases:
        nd = len(c.diff)
        y, tout = results[pos], results[pos + 1]
        vjp = results[pos + 2:pos + 2 + nd]
        pos += 2 + nd
        if c.second_order:
            jj, vv = results[pos], results[pos + 1:pos + 1 + nd]
            pos += 1 + nd
        yp, ym = results[pos], results[pos + 1]
        pos += 2
        d = c.data
        f = c.jax_f()
        x = [c.args[i] for i in c.diff]
        try:
            np.testing.assert_allclose(y, c.out, rtol=rtol, atol=atol, err_msg="primal")
            _, jt = jax.jvp(f, tuple(x), tuple(d["t"]))
            np.testing.assert_allclose(tout, jt, rtol=rtol, atol=atol, err_msg="jvp vs jax")
            if c.fd:
                fd = (yp.astype(np.result_type(yp, np.float64)) - ym) / (2 * c.fd_h)
                np.testing.assert_allclose(tout, fd, rtol=fd_rtol, atol=fd_rtol,
                                           err_msg="jvp vs finite differences")
            _, pull = jax.vjp(f, *x)
            for got, want in zip(vjp, pull(d["ct"])):
                np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg="vjp vs jax")
            # <ct, J t> == <J^T ct, t> (real inner product; JAX's transposes are linear)
            lhs = np.sum(np.real(d["ct"] * tout))
            rhs = sum(np.sum(np.real(g * t)) for g, t in zip(vjp, d["t"]))
            np.testing.assert_allclose(lhs, rhs, rtol=1e-6, atol=1e-8, err_msg="dot identity")
            if not c.second_order:
                continue
            _, jj_want = jax.jvp(lambda *xx: jax.jvp(f, xx, tuple(d["t"]))[1], tuple(x),
                                 tuple(d["t2"]))
            np.testing.assert_allclose(jj, jj_want, rtol=rtol, atol=atol,
                                       err_msg="jvp of jvp vs jax")
            _, pull2 = jax.vjp(lambda *xx: jax.vjp(f, *xx)[1](d["ct"]), *x)
            for got, want in zip(vv, pull2(tuple(d["ct2"]))):
                np.testing.assert_allclose(got, want, rtol=rtol, atol=atol,
                                           err_msg="vjp of vjp vs jax")
        except AssertionError as e:
            failures.append(f"{c.id}: {e}")
    assert not failures, "\n".join(failures)


def u(*shape, lo=0.2, hi=0.9, dtype=np.float64):
    return RNG.uniform(lo, hi, shape).astype(dtype)


def cu(*shape):
    return (u(*shape) + 1j * u(*shape)).astype(np.complex128)


UNARY = ["neg", "exp", "exp2", "expm1", "log", "log1p", "sqrt", "rsqrt", "cbrt", "sin", "cos",
         "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "atanh", "logistic",
         "erf", "erfc", "erf_inv", "abs"]


def elementwise_cases():
    cases = [Case(op, getattr(lax, op), u(3)) for op in UNARY]
    cases.append(Case("acosh", lax.acosh, u(3, lo=1.2, hi=2.0)))
    cases.append(Case("lgamma", lax.lgamma, u(3, lo=0.5, hi=3.0)))
    cases.append(Case("digamma", lax.digamma, u(3, lo=0.5, hi=3.0)))
    # polygamma(m, x): differentiated in x only (m is an integer order; JAX rejects d/dm).
    cases.append(Case("polygamma", lax.polygamma, np.array([0.0, 1.0, 3.0]),
                      u(3, lo=0.5, hi=3.0), diff=[1]))
    cases.append(Case("abs", lax.abs, np.array([-0.7, 0.3, -0.4])))
    for op in ["add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2"]:
        cases.append(Case(op, getattr(lax, op), u(3), u(3)))
    cases.append(Case("pow", lax.pow, u(3), np.array([2, 3, -1], np.int32)))
    for y in (0, 1, 3, -2):
        cases.append(Case("integer_pow", lambda x, y=y: lax.integer_pow(x, y), u(3),
                          params={"y": y}))
    for op in ["sign", "floor", "ceil", "round"]:
        cases.append(Case(op, getattr(lax, op), u(3, lo=-2, hi=2)))
    # complex numbers
    cases += [Case("real", lax.real, cu(3)), Case("imag", lax.imag, cu(3)),
              Case("complex", lax.complex, u(3), u(3)), Case("conj", lax.conj, cu(3)),
              Case("mul", lax.mul, cu(3), cu(3)), Case("exp", lax.exp, cu(3)),
              Case("abs", lax.abs, cu(3)), Case("sin", lax.sin, cu(3)),
              Case("div", lax.div, cu(3), cu(3))]
    return cases


def structural_cases():
    x = u(2, 3)
    dn = (((1,), (0,)), ((), ()))
    return [
        Case("convert_element_type", lambda a: lax.convert_element_type(a, np.float32),
             x, params={"new_dtype": np.dtype(np.float32)}, fd_h=1e-2),
        Case("convert_element_type", lambda a: lax.convert_element_type(a, np.complex128),
             x, params={"new_dtype": np.dtype(np.complex128)}),
        Case("convert_element_type", lambda a: lax.convert_element_type(a, np.float64),
             cu(3), params={"new_dtype": np.dtype(np.float64)}),
        Case("reduce_precision", lambda a: lax.reduce_precision(a, 8, 23), x,
             params={"exponent_bits": 8, "mantissa_bits": 23}, fd_h=1e-2),
        Case("copy", lambda a: a, x),
        Case("stop_gradient", lax.stop_gradient, x, fd=False),
        Case("broadcast_in_dim", lambda a: lax.broadcast_in_dim(a, (4, 2, 3), (1, 2)), x,
             params={"shape": (4, 2, 3), "broadcast_dimensions": (1, 2)}),
        Case("broadcast_in_dim", lambda a: lax.broadcast_in_dim(a, (2, 5, 3), (0, 2)),
             u(2, 1, 3)[:, 0, :], params={"shape": (2, 5, 3), "broadcast_dimensions": (0, 2)}),
        Case("broadcast_in_dim", lambda a: lax.broadcast_in_dim(a, (3, 4), (0, 1)), u(3, 1),
             params={"shape": (3, 4), "broadcast_dimensions": (0, 1)}),
        Case("reshape", lambda a: lax.reshape(a, (3, 2)), x, params={"new_sizes": (3, 2)}),
        Case("reshape", lambda a: lax.reshape(a, (6,), (1, 0)), x,
             params={"new_sizes": (6,), "dimensions": (1, 0)}),
        Case("squeeze", lambda a: lax.squeeze(a, (1,)), u(3, 1), params={"dimensions": (1,)}),
        Case("expand_dims", lambda a: lax.expand_dims(a, (0, 3)), x,
             params={"dimensions": (0, 3)}),
        Case("transpose", lambda a: lax.transpose(a, (2, 0, 1)), u(2, 3, 4),
             params={"permutation": (2, 0, 1)}),
        Case("rev", lambda a: lax.rev(a, (1,)), x, params={"dimensions": (1,)}),
        Case("slice", lambda a: lax.slice(a, (0, 1), (2, 6), (1, 2)), u(2, 7),
             params={"start_indices": (0, 1), "limit_indices": (2, 6), "strides": (1, 2)}),
        Case("pad", lambda a, p: lax.pad(a, p, ((1, 2, 1), (-1, 0, 0))), x, np.float64(0.5),
             params={"padding_config": ((1, 2, 1), (-1, 0, 0))}),
        Case("concatenate", lambda a, b: lax.concatenate([a, b], 1), x, u(2, 2),
             params={"dimension": 1}),
        Case("select_n", lax.select_n, np.array([True, False, True]), u(3), u(3)),
        Case("select_n", lax.select_n, np.array([0, 2, 1], np.int32), u(3), u(3), u(3)),
        # (jax's own clamp JVP fails on scalar bounds: the oracle broadcasts them first)
        Case("clamp", lambda lo, a, hi: lax.clamp(jnp.broadcast_to(lo, a.shape), a,
                                                  jnp.broadcast_to(hi, a.shape)),
             np.float64(0.3), u(4, lo=0, hi=1), np.float64(0.7)),
        Case("clamp", lax.clamp, u(4, lo=0, hi=0.5), u(4, lo=0, hi=1), u(4, lo=0.5, hi=1)),
        Case("dot_general", lambda a, b: lax.dot_general(a, b, dn), x, u(3, 4),
             params={"dimension_numbers": dn}),
        Case("dot_general", lambda a, b: lax.dot_general(a, b, (((0,), (2,)), ((2,), (0,)))),
             u(3, 2, 5), u(5, 4, 3),
             params={"dimension_numbers": (((0,), (2,)), ((2,), (0,)))}),
        Case("dot_general", lambda a, b: lax.dot_general(a, b, (((1,), (1,)), ((0,), (0,)))),
             u(2, 3, 4), u(2, 3),
             params={"dimension_numbers": (((1,), (1,)), ((0,), (0,)))}),
    ]


def test_elementwise_derivatives():
    check_cases(elementwise_cases())


def test_structural_derivatives():
    check_cases(structural_cases())


# ---- nested transformations, custom rules, checkpoint, non-differentiable inputs ----
S = "tensor<f64>"

NESTED = f"""
func.func private @f(%x: {S}) -> {S} {{
  %0 = "jaxpr.sin"(%x) : ({S}) -> {S}
  %1 = "jaxpr.mul"(%0, %x) : ({S}, {S}) -> {S}
  %2 = "jaxpr.exp"(%1) : ({S}) -> {S}
  return %2 : {S}
}}
func.func private @g1(%x: {S}) -> {S} {{
  %one = "jaxpr.constant"() {{value = dense<1.0> : {S}}} : () -> {S}
  %0 = "jaxpr.vjp"(%x, %one) {{callee = @f}} : ({S}, {S}) -> {S}
  return %0 : {S}
}}
func.func private @g2(%x: {S}) -> {S} {{
  %one = "jaxpr.constant"() {{value = dense<1.0> : {S}}} : () -> {S}
  %0 = "jaxpr.vjp"(%x, %one) {{callee = @g1}} : ({S}, {S}) -> {S}
  return %0 : {S}
}}
func.func private @g3(%x: {S}) -> {S} {{
  %one = "jaxpr.constant"() {{value = dense<1.0> : {S}}} : () -> {S}
  %0 = "jaxpr.vjp"(%x, %one) {{callee = @g2}} : ({S}, {S}) -> {S}
  return %0 : {S}
}}
func.func private @fwd_over_rev(%x: {S}) -> {S} {{
  %one = "jaxpr.constant"() {{value = dense<1.0> : {S}}} : () -> {S}
  %0:2 = "jaxpr.jvp"(%x, %one) {{callee = @g2}} : ({S}, {S}) -> ({S}, {S})
  return %0#1 : {S}
}}
func.func private @rev_over_fwd(%x: {S}) -> {S} {{
  %one = "jaxpr.constant"() {{value = dense<1.0> : {S}}} : () -> {S}
  %0 = "jaxpr.vjp"(%x, %one) {{callee = @d1}} : ({S}, {S}) -> {S}
  return %0 : {S}
}}
func.func private @d1(%x: {S}) -> {S} {{
  %one = "jaxpr.constant"() {{value = dense<1.0> : {S}}} : () -> {S}
  %0:2 = "jaxpr.jvp"(%x, %one) {{callee = @f}} : ({S}, {S}) -> ({S}, {S})
  return %0#1 : {S}
}}
func.func @main(%x: {S}) -> ({S}, {S}, {S}, {S}, {S}) {{
  %1 = "jaxpr.call"(%x) {{callee = @g1}} : ({S}) -> {S}
  %2 = "jaxpr.call"(%x) {{callee = @g2}} : ({S}) -> {S}
  %3 = "jaxpr.call"(%x) {{callee = @g3}} : ({S}) -> {S}
  %4 = "jaxpr.call"(%x) {{callee = @fwd_over_rev}} : ({S}) -> {S}
  %5 = "jaxpr.call"(%x) {{callee = @rev_over_fwd}} : ({S}) -> {S}
  return %1, %2, %3, %4, %5 : {S}, {S}, {S}, {S}, {S}
}}
"""


def test_grad_of_grad_of_grad():
    def f(x):
        return jnp.exp(jnp.sin(x) * x)
    x = np.float64(0.7)
    got = compile_and_run(NESTED, x)
    g1, g2, g3 = jax.grad(f), jax.grad(jax.grad(f)), jax.grad(jax.grad(jax.grad(f)))
    want = [g1(x), g2(x), g3(x), jax.grad(g2)(x), g2(x)]
    np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-10)


CUSTOM = f"""
func.func private @f(%x: {S}) -> {S} {{
  %0 = "jaxpr.sin"(%x) : ({S}) -> {S}
  return %0 : {S}
}}
func.func private @f_rule(%x: {S}, %t: {S}) -> ({S}, {S}) {{
  %0 = "jaxpr.sin"(%x) : ({S}) -> {S}
  %c = "jaxpr.constant"() {{value = dense<3.0> : {S}}} : () -> {S}
  %1 = "jaxpr.mul"(%c, %x) : ({S}, {S}) -> {S}
  %2 = "jaxpr.mul"(%t, %1) : ({S}, {S}) -> {S}
  return %0, %2 : {S}, {S}
}}
func.func private @f_fwd(%x: {S}) -> ({S}, {S}) {{
  %0 = "jaxpr.sin"(%x) : ({S}) -> {S}
  %1 = "jaxpr.cos"(%x) : ({S}) -> {S}
  return %0, %1 : {S}, {S}
}}
func.func private @f_bwd(%r: {S}, %ct: {S}) -> {S} {{
  %c = "jaxpr.constant"() {{value = dense<5.0> : {S}}} : () -> {S}
  %0 = "jaxpr.mul"(%ct, %r) : ({S}, {S}) -> {S}
  %1 = "jaxpr.mul"(%0, %c) : ({S}, {S}) -> {S}
  return %1 : {S}
}}
func.func private @cj(%x: {S}) -> {S} {{
  %0 = "jaxpr.custom_jvp_call"(%x) {{callee = @f, jvp = @f_rule}} : ({S}) -> {S}
  %1 = "jaxpr.mul"(%0, %x) : ({S}, {S}) -> {S}
  return %1 : {S}
}}
func.func private @cv(%x: {S}) -> {S} {{
  %0 = "jaxpr.custom_vjp_call"(%x) {{callee = @f, fwd = @f_fwd, bwd = @f_bwd}} : ({S}) -> {S}
  %1 = "jaxpr.mul"(%0, %x) : ({S}, {S}) -> {S}
  return %1 : {S}
}}
func.func private @sinsin(%x: {S}) -> {S} {{
  %0 = "jaxpr.sin"(%x) : ({S}) -> {S}
  %1 = "jaxpr.sin"(%0) : ({S}) -> {S}
  return %1 : {S}
}}
func.func private @ck(%x: {S}) -> {S} {{
  %0 = "jaxpr.checkpoint"(%x) {{callee = @sinsin}} : ({S}) -> {S}
  %1 = "jaxpr.mul"(%0, %x) : ({S}, {S}) -> {S}
  return %1 : {S}
}}
func.func private @grad_ck(%x: {S}) -> {S} {{
  %one = "jaxpr.constant"() {{value = dense<1.0> : {S}}} : () -> {S}
  %0 = "jaxpr.vjp"(%x, %one) {{callee = @ck}} : ({S}, {S}) -> {S}
  return %0 : {S}
}}
func.func @main(%x: {S}, %t: {S}) -> ({S}, {S}, {S}, {S}, {S}, {S}, {S}, {S}, {S}) {{
  %a = "jaxpr.call"(%x) {{callee = @cj}} : ({S}) -> {S}
  %b:2 = "jaxpr.jvp"(%x, %t) {{callee = @cj}} : ({S}, {S}) -> ({S}, {S})
  %c = "jaxpr.vjp"(%x, %t) {{callee = @cj}} : ({S}, {S}) -> {S}
  %d = "jaxpr.call"(%x) {{callee = @cv}} : ({S}) -> {S}
  %e = "jaxpr.vjp"(%x, %t) {{callee = @cv}} : ({S}, {S}) -> {S}
  %f:2 = "jaxpr.jvp"(%x, %t) {{callee = @ck}} : ({S}, {S}) -> ({S}, {S})
  %g = "jaxpr.vjp"(%x, %t) {{callee = @ck}} : ({S}, {S}) -> {S}
  %h = "jaxpr.vjp"(%x, %t) {{callee = @grad_ck}} : ({S}, {S}) -> {S}
  return %a, %b#1, %c, %d, %e, %f#1, %g, %h, %b#0 : {S}, {S}, {S}, {S}, {S}, {S}, {S}, {S}, {S}
}}
"""


def test_custom_jvp_custom_vjp_checkpoint():
    x, t = np.float64(0.7), np.float64(1.3)
    a, b, c, d, e, f, g, h, b0 = compile_and_run(CUSTOM, x, t)
    s, co = np.sin(x), np.cos(x)
    np.testing.assert_allclose(a, s * x)
    np.testing.assert_allclose(b0, s * x)
    # custom rule: d sin -> 3x (deliberately not cos x, to see the rule is used)
    np.testing.assert_allclose(b, t * (3 * x * x + s), rtol=1e-12)
    np.testing.assert_allclose(c, t * (3 * x * x + s), rtol=1e-12)
    np.testing.assert_allclose(d, s * x)
    # custom bwd: ct * cos(x) * 5
    np.testing.assert_allclose(e, t * (5 * co * x + s), rtol=1e-12)

    def ck(x):
        return jax.checkpoint(lambda y: jnp.sin(jnp.sin(y)))(x) * x
    np.testing.assert_allclose(f, jax.jvp(ck, (x,), (t,))[1], rtol=1e-12)
    np.testing.assert_allclose(g, t * jax.grad(ck)(x), rtol=1e-12)
    np.testing.assert_allclose(h, t * jax.grad(jax.grad(ck))(x), rtol=1e-12)


def _expand(text):
    ctx = context()
    with ctx, ir.Location.unknown(ctx):
        module = ir.Module.parse(text)
        run_pipeline(module, "builtin.module(jaxpr-verify,jaxpr-expand-transforms,jaxpr-verify)")
    return module


def test_checkpoint_recomputes_forward_in_backward():
    module = _expand(CUSTOM)
    fns = {str(op.attributes["sym_name"]).strip('"'): str(op) for op in module.body.operations}
    # The backward function of @ck runs vjp @sinsin again (its fwd), from @ck's input.
    bwd = fns["ck_bwd"]
    assert "@sinsin_fwd" in bwd and "@sinsin_bwd" in bwd, bwd
    # ...and the forward function of @ck saves no internals of @sinsin.
    assert "jaxpr.sin" not in fns["ck_fwd"] and "jaxpr.cos" not in fns["ck_fwd"]


def test_jvp_of_custom_vjp_is_an_error():
    text = CUSTOM.replace('%b:2 = "jaxpr.jvp"(%x, %t) {callee = @cj}',
                          '%b:2 = "jaxpr.jvp"(%x, %t) {callee = @cv}')
    with pytest.raises(PassError, match="forward-mode autodiff .* custom_vjp function @f"):
        _expand(text)


INT_ARGS = """
func.func private @f(%x: tensor<3xf32>, %n: tensor<3xi32>, %p: tensor<3xi1>) -> (tensor<3xf32>, tensor<3xi32>) {
  %0 = "jaxpr.convert_element_type"(%n) {new_dtype = f32} : (tensor<3xi32>) -> tensor<3xf32>
  %1 = "jaxpr.mul"(%x, %0) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %2 = "jaxpr.select_n"(%p, %x, %1) : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %3 = "jaxpr.convert_element_type"(%2) {new_dtype = i32} : (tensor<3xf32>) -> tensor<3xi32>
  return %2, %3 : tensor<3xf32>, tensor<3xi32>
}
func.func @main(%x: tensor<3xf32>, %n: tensor<3xi32>, %p: tensor<3xi1>, %t: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0:3 = "jaxpr.jvp"(%x, %n, %p, %t) {callee = @f} : (tensor<3xf32>, tensor<3xi32>, tensor<3xi1>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xi32>, tensor<3xf32>)
  %1 = "jaxpr.vjp"(%x, %n, %p, %t) {callee = @f} : (tensor<3xf32>, tensor<3xi32>, tensor<3xi1>, tensor<3xf32>) -> tensor<3xf32>
  return %0#2, %1 : tensor<3xf32>, tensor<3xf32>
}
"""


def test_integer_and_bool_inputs_have_no_tangents():
    x = np.array([0.5, 1.5, -2.0], np.float32)
    n = np.array([2, 3, 4], np.int32)
    p = np.array([True, False, True])
    t = np.array([1.0, 2.0, 3.0], np.float32)
    jt, ct = compile_and_run(INT_ARGS, x, n, p, t)
    np.testing.assert_allclose(jt, np.where(p, t * n, t))
    np.testing.assert_allclose(ct, np.where(p, t * n, t))


def test_diff_args_on_integer_argument_is_a_verifier_error():
    text = INT_ARGS.split("func.func @main")[0] + """
func.func @main(%x: tensor<3xf32>, %n: tensor<3xi32>, %p: tensor<3xi1>, %t: tensor<3xi32>) -> tensor<3xi32> {
  %0:3 = "jaxpr.jvp"(%x, %n, %p, %t) {callee = @f, diff_args = array<i64: 1>} : (tensor<3xf32>, tensor<3xi32>, tensor<3xi1>, tensor<3xi32>) -> (tensor<3xf32>, tensor<3xi32>, tensor<3xi32>)
  return %0#2 : tensor<3xi32>
}
"""
    with pytest.raises(PassError, match="diff_args lists index 1 of dtype i32.*float0"):
        _expand(text)


def test_verifier_checks_callee_and_signature():
    bad = INT_ARGS.replace("{callee = @f}", "{callee = @nope}", 1)
    with pytest.raises(PassError, match="@nope, which is not a function"):
        _expand(bad)
    bad = f"""
func.func private @f(%x: {S}) -> {S} {{
  return %x : {S}
}}
func.func @main(%x: {S}) -> tensor<f32> {{
  %0 = "jaxpr.call"(%x) {{callee = @f}} : ({S}) -> tensor<f32>
  return %0 : tensor<f32>
}}
"""
    with pytest.raises(PassError, match="result 0 has type tensor<f32>"):
        _expand(bad)
    bad = bad.replace('%0 = "jaxpr.call"(%x) {callee = @f} : (tensor<f64>) -> tensor<f32>',
                      '%0 = "jaxpr.vjp"(%x) {callee = @f} : (tensor<f64>) -> tensor<f32>')
    with pytest.raises(PassError, match=r"operand types \(primals, cotangents\) \(f64\[\]\) "
                                        r"do not match the expected \(f64\[\], f64\[\]\)"):
        _expand(bad)


def test_lowering_rejects_unexpanded_transform():
    ctx = context()
    with ctx, ir.Location.unknown(ctx):
        module = ir.Module.parse(NESTED)
        with pytest.raises(PassError, match="unexpanded transformation op 'jaxpr.vjp'.*"
                                            "--jaxpr-expand-transforms"):
            run_pipeline(module, "builtin.module(jaxpr-to-stablehlo)")


def test_python_entry_points():
    ctx = context()
    with ctx, ir.Location.unknown(ctx):
        module = ir.Module.parse(CUSTOM)
        name = jvp_function(module, "sinsin")
        assert name == "sinsin_jvp" and jvp_function(module, "sinsin") == name
        info = vjp_functions(module, "sinsin")
        assert (info.fwd, info.bwd) == ("sinsin_fwd", "sinsin_bwd")
        assert info.num_outputs == 1 and info.diff_args == (0,) and info.num_residuals >= 1
        assert vjp_functions(module, "sinsin") == info  # reused, not rebuilt
        run_pipeline(module, "builtin.module(jaxpr-verify)")


def reduction_indexing_cases():
    x = u(3, 4)
    i0, i1 = np.int32(1), np.int32(2)
    return [
        Case("reduce_sum", lambda a: jnp.sum(a, axis=1), x,
             params={"axes": (1,)}),
        Case("reduce_sum", lambda a: jnp.sum(a), x,
             params={"axes": (0, 1)}),
        Case("reduce_max", lambda a: jnp.max(a, axis=0), x,
             params={"axes": (0,)}),
        Case("reduce_min", lambda a: jnp.min(a, axis=1), x,
             params={"axes": (1,)}),
        Case("cumsum", lambda a: lax.cumsum(a, 1), x, params={"axis": 1}),
        Case("cumsum", lambda a: lax.cumsum(a, 0, reverse=True), x,
             params={"axis": 0, "reverse": True}),
        Case("dynamic_slice", lambda a, s, t: lax.dynamic_slice(a, (s, t), (2, 2)), x, i0, i1,
             params={"slice_sizes": (2, 2)}),
        Case("dynamic_update_slice", lambda a, v, s, t: lax.dynamic_update_slice(a, v, (s, t)),
             x, u(2, 2), i0, i1),
    ]


def test_reduction_indexing_derivatives():
    check_cases(reduction_indexing_cases())
